import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fauxAssistantMessage, type Context } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { recordingUi, startPi, type PiHarness } from "../helpers/pi.ts";
import { waitFor } from "../helpers/waitFor.ts";

const harnesses: PiHarness[] = [];
afterEach(async () => {
	for (const h of harnesses.splice(0).reverse()) await h.dispose();
});

async function archives(workspace: string): Promise<SessionArchive[]> {
	const dir = historyDir(workspace);
	const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".json"));
	return Promise.all(names.map(async (n) => JSON.parse(await readFile(join(dir, n), "utf8")) as SessionArchive));
}
const summaries = async (workspace: string) => (await archives(workspace)).flatMap((a) => Object.values(a.summaries));

const isSummaryCall = (context: Context) => (context.systemPrompt ?? "").includes("You write summaries");

/**
 * A Pi whose faux model answers prompts with "answer N" and summary calls through `onSummary`
 * (which may hold the call open to let a test cancel it).
 */
async function piWithModel(onSummary: (context: Context) => Promise<string> | string = () => "SUMMARY TEXT", uiContext = recordingUi()) {
	const h = await startPi({ uiContext: uiContext.ui });
	harnesses.push(h);
	let answers = 0;
	const summaryCalls: Context[] = [];
	h.faux.setResponses(
		Array.from({ length: 100 }, () => async (context: Context) => {
			if (isSummaryCall(context)) {
				summaryCalls.push(context);
				return fauxAssistantMessage(await onSummary(context));
			}
			return fauxAssistantMessage(`answer ${++answers}`);
		}),
	);
	return { h, summaryCalls, shown: uiContext.shown };
}

/** Four prompts: the fourth Q&A completes the first chunk, so one summary becomes due. */
async function fourQuestions(h: PiHarness) {
	for (let i = 1; i <= 4; i++) await h.session.prompt(`question ${i} about the cache layer`);
}

describe("summaries inside Pi", () => {
	it("are made after an interaction ends normally, with Pi's current model, and the footer shows progress then clears", async () => {
		const { h, summaryCalls, shown } = await piWithModel();
		await fourQuestions(h);
		await waitFor(async () => (await summaries(h.workspace)).some((s) => s.status === "ready"), "a ready summary");
		const [made] = (await summaries(h.workspace)).filter((s) => s.status === "ready");
		expect(made).toMatchObject({ text: "SUMMARY TEXT", model: "faux/faux-1", promptVersion: expect.any(String) });
		expect(summaryCalls).toHaveLength(1);
		expect(summaryCalls[0]!.messages.map((m) => JSON.stringify(m.content)).join()).toContain("question 4 about the cache layer");
		await h.runtime.summariesSettled();
		const statuses = shown.filter((s) => s.kind === "status:pbot").map((s) => s.text);
		expect(statuses).toContain("pbot: summaries 1/1");
		// 0/1 from the start of the pass, before the first (slow) call answers.
		expect(statuses.indexOf("pbot: summaries 0/1")).toBeGreaterThanOrEqual(0);
		expect(statuses.indexOf("pbot: summaries 0/1")).toBeLessThan(statuses.indexOf("pbot: summaries 1/1"));
		expect(statuses.at(-1)).toBe("(cleared)");
	});

	it("never start on load or on a query", async () => {
		const { h, summaryCalls } = await piWithModel();
		h.runtime.cancelSummaries();
		// Write four Q&A with summaries held back: cancel each scheduled pass right after agent_end.
		for (let i = 1; i <= 4; i++) {
			await h.session.prompt(`question ${i}`);
			h.runtime.cancelSummaries();
		}
		await h.runtime.settled();
		await h.runtime.summariesSettled();
		expect(summaryCalls).toHaveLength(0);
		expect((await summaries(h.workspace)).map((s) => s.status)).toEqual(["pending"]);
		// A query (command and tool) and a new start (load) do not start the model.
		await h.session.prompt("/pbot history cache");
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		await tool.execute("t", { action: "search", query: "cache" }, undefined, undefined, h.session.extensionRunner.createContext());
		const second = await startPi({ root: h.root });
		harnesses.push(second);
		await second.runtime.settled();
		await second.runtime.summariesSettled();
		expect(summaryCalls).toHaveLength(0);
		expect((await summaries(h.workspace)).map((s) => s.status)).toEqual(["pending"]);
	});

	for (const trigger of ["input", "session_before_switch", "session_before_fork", "session_shutdown", "user message_start"] as const) {
		it(`cancel on ${trigger}: the call is aborted, the summary stays pending, nothing is stored`, async () => {
			let release: () => void = () => undefined;
			const gate = new Promise<void>((r) => (release = r));
			const { h, summaryCalls } = await piWithModel(async () => {
				await gate;
				return "SHOULD NOT BE STORED";
			});
			await fourQuestions(h);
			await waitFor(() => summaryCalls.length === 1, "the summary call to start");
			const runner = h.session.extensionRunner;
			if (trigger === "input") await runner.emit({ type: "input", text: "new question", source: "interactive" } as never);
			else if (trigger === "session_before_switch") await runner.emit({ type: "session_before_switch", reason: "new" } as never);
			else if (trigger === "session_before_fork") await runner.emit({ type: "session_before_fork", entryId: "x", position: "at" } as never);
			else if (trigger === "session_shutdown") await runner.emit({ type: "session_shutdown", reason: "quit" });
			else await runner.emit({ type: "message_start", message: { role: "user", content: [{ type: "text", text: "steer" }], timestamp: Date.now() } } as never);
			release();
			await h.runtime.summariesSettled();
			await h.runtime.settled();
			const all = await summaries(h.workspace);
			const disk = await archives(h.workspace);
			// What the summary pass held: the archives with summaries due (not the whole history).
			const memory = Object.values(h.runtime.serviceFor({ cwd: h.workspace, sessionId: "x", agentDir: h.agentDir }).heldState().sessions);
			expect({
				trigger,
				statuses: all.map((s) => s.status),
				problems: h.runtime.takeProblems(),
				diskNodes: disk.map((a) => Object.keys(a.nodes).length),
				memory: memory.map((a) => [Object.keys(a.nodes).length, Object.keys(a.summaries).length]),
			}).toEqual({ trigger, statuses: ["pending"], problems: [], diskNodes: [4], memory: [[4, 1]] });
			expect(JSON.stringify(all)).not.toContain("SHOULD NOT BE STORED");
		});
	}

	it("say once in the status why nothing runs without a model or auth, and make no call", async () => {
		const { h, summaryCalls } = await piWithModel();
		const statuses: (string | undefined)[] = [];
		const facts = { cwd: h.workspace, sessionId: h.session.sessionId, agentDir: h.agentDir };
		const model = h.faux.getModel();
		for (let i = 0; i < 3; i++) await h.runtime.summarize(facts, model, { error: "no API key for faux" }, (t) => statuses.push(t));
		for (let i = 0; i < 2; i++) await h.runtime.summarize(facts, undefined, { error: "no model" }, (t) => statuses.push(t));
		expect(statuses).toEqual(["pbot: summaries paused (no auth for faux/faux-1: no API key for faux)", "pbot: summaries paused (no model selected)"]);
		expect(summaryCalls).toHaveLength(0);
	});
});
