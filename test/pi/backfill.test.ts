import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { SETTINGS_FILE } from "../../src/storage/history-files/settingsFile.ts";
import { folderScope } from "../../src/storage/history-files/paths.ts";
import { type PiHarness, recordingUi, startPi } from "../helpers/pi.ts";
import { waitFor } from "../helpers/waitFor.ts";

const harnesses: PiHarness[] = [];
afterEach(async () => {
	for (const h of harnesses.splice(0).reverse()) await h.dispose();
});

const isSummaryCall = (context: Context) => (context.systemPrompt ?? "").includes("You write summaries");
const userText = (context: Context) => JSON.stringify(context.messages.map((m) => m.content));

/**
 * A workspace with `sessions` past sessions of eight Q&A each (two level-1 summaries due in each),
 * written by Pi's SessionManager into Pi's native folder for it, and a settings file with
 * `threshold` when one is given.
 */
async function pastHistory(sessions: number, threshold?: number): Promise<string> {
	const root = await mkdtemp(join(tmpdir(), "pbot-backfill-"));
	const workspace = join(root, "workspace");
	const agentDir = join(root, "agent");
	await mkdir(workspace, { recursive: true });
	for (let s = 1; s <= sessions; s++) {
		const sm = SessionManager.create(workspace, nativeSessionDir(workspace, agentDir));
		for (let q = 1; q <= 8; q++) {
			sm.appendMessage({ role: "user", content: [{ type: "text", text: `past session ${s} question ${q}` }], timestamp: Date.now() });
			sm.appendMessage(fauxAssistantMessage(`past answer ${s}.${q}`));
		}
	}
	if (threshold !== undefined) {
		await mkdir(join(workspace, ".pi", "pbot"), { recursive: true });
		await writeFile(join(workspace, SETTINGS_FILE), JSON.stringify({ format: "pbot-settings", version: 1, summaries: { threshold } }));
	}
	return root;
}

/**
 * Pi over `root` with a faux model that counts summary calls, and a UI that answers the backfill
 * question with `answer` (the row it picks), noting how many summary calls were made before it.
 */
async function piAnswering(root: string, answer: (options: string[]) => string | undefined, withUi = true) {
	const asked: { title: string; callsBefore: number }[] = [];
	const summaryCalls: Context[] = [];
	const ui = recordingUi((title, options) => {
		asked.push({ title, callsBefore: summaryCalls.length });
		return answer(options);
	});
	const h = await startPi({ root, ...(withUi ? { uiContext: ui.ui } : {}) });
	harnesses.push(h);
	h.faux.setResponses(
		Array.from({ length: 100 }, () => (context: Context) => {
			if (isSummaryCall(context)) {
				summaryCalls.push(context);
				return fauxAssistantMessage("SUMMARY");
			}
			return fauxAssistantMessage("answer");
		}),
	);
	/** Four questions (one summary due in this session), then the pass that follows. */
	const fourQuestions = async () => {
		for (let i = 1; i <= 4; i++) await h.session.prompt(`current question ${i}`);
		await h.runtime.settled();
		await waitForPass(h);
	};
	return { h, asked, summaryCalls, shown: ui.shown, fourQuestions };
}

/** The pass scheduled after the last turn has started and ended. */
async function waitForPass(h: PiHarness): Promise<void> {
	await new Promise((r) => setTimeout(r, 20));
	await h.runtime.summariesSettled();
}

const pick = (prefix: string) => (options: string[]) => options.find((o) => o.startsWith(prefix));
const settingsOf = async (root: string) => JSON.parse(await readFile(join(root, "workspace", SETTINGS_FILE), "utf8")) as { summaries: object };

describe("summaries of past sessions ask first when the backlog is large", () => {
	it("asks before any call, with the number of calls and an estimate of tokens; declining makes only this session's, and is remembered", async () => {
		const root = await pastHistory(3, 4); // 6 calls due in past sessions, threshold 4
		const { asked, summaryCalls, fourQuestions } = await piAnswering(root, pick("No:"));
		await fourQuestions();
		expect(asked).toHaveLength(1);
		expect(asked[0]!.callsBefore).toBe(0);
		expect(asked[0]!.title).toMatch(/6 summaries in 3 sessions \(about [\d,.]+k? input tokens\)/);
		// The session's own summary proceeds; no past session's is made.
		expect(summaryCalls.map(userText).every((t) => t.includes("current question"))).toBe(true);
		expect(summaryCalls).toHaveLength(1);
		expect(await settingsOf(root)).toEqual({ format: "pbot-settings", version: 1, summaries: { backfill: "off", threshold: 4 } });

		// A new Pi process on the workspace does not ask again.
		const again = await piAnswering(root, pick("Yes:"));
		await again.fourQuestions();
		expect(again.asked).toHaveLength(0);
		expect(again.summaryCalls.map(userText).some((t) => t.includes("past session"))).toBe(false);
	});

	it("accepting makes the past sessions' summaries too, and is remembered", async () => {
		const root = await pastHistory(3, 4);
		const { asked, summaryCalls, fourQuestions } = await piAnswering(root, pick("Yes:"));
		await fourQuestions();
		expect(asked).toHaveLength(1);
		expect(summaryCalls).toHaveLength(7);
		expect(summaryCalls.filter((c) => userText(c).includes("past session"))).toHaveLength(6);
		expect((await settingsOf(root)).summaries).toEqual({ backfill: "on", threshold: 4 });
	});

	it("a dismissed question makes only this session's summaries, tells the person why, and is not asked again in this process", async () => {
		const root = await pastHistory(3, 4);
		const { h, asked, summaryCalls, shown, fourQuestions } = await piAnswering(root, () => undefined);
		await fourQuestions();
		await fourQuestions();
		expect(asked).toHaveLength(1);
		expect(summaryCalls).toHaveLength(2);
		expect(summaryCalls.map(userText).every((t) => t.includes("current question"))).toBe(true);
		const told = shown.filter((x) => x.kind === "notify:info").map((x) => x.text);
		expect(told).toHaveLength(1);
		expect(told[0]).toMatch(/^pbot: the earlier work \(6 summaries in 3 sessions \(about [\d,.]+k? input tokens\)\) waits; .*\/pbot summaries on/);
		// Nothing of it goes to the model's tool results.
		expect(h.runtime.takeProblems()).toEqual([]);
	});

	it("a backlog at or below the threshold starts without a question", async () => {
		const root = await pastHistory(2, 4); // 4 calls: not above 4
		const { asked, summaryCalls, fourQuestions } = await piAnswering(root, pick("No:"));
		await fourQuestions();
		expect(asked).toHaveLength(0);
		expect(summaryCalls).toHaveLength(5);
	});

	it("print mode (no UI) makes only the current session's summaries, and stores no answer", async () => {
		const root = await pastHistory(3, 4);
		const { summaryCalls, fourQuestions } = await piAnswering(root, pick("Yes:"), false);
		await fourQuestions();
		expect(summaryCalls).toHaveLength(1);
		expect(userText(summaryCalls[0]!)).toContain("current question");
		expect((await settingsOf(root)).summaries).toEqual({ threshold: 4 });
	});
});

describe("a long session resumed after pbot was installed", () => {
	/** A workspace whose one session has eight Q&A (two summaries due), opened again by Pi: its earlier work. */
	async function resumed(choice: (options: string[]) => string | undefined) {
		const root = await pastHistory(1, 1);
		const dir = nativeSessionDir(join(root, "workspace"), join(root, "agent"));
		const file = join(dir, (await readdir(dir))[0] as string);
		const asked: { title: string; callsBefore: number }[] = [];
		const summaryCalls: Context[] = [];
		const ui = recordingUi((title, options) => {
			asked.push({ title, callsBefore: summaryCalls.length });
			return choice(options);
		});
		const h = await startPi({ root, uiContext: ui.ui, sessionManager: () => SessionManager.open(file) });
		harnesses.push(h);
		h.faux.setResponses(
			Array.from({ length: 100 }, () => (context: Context) => {
				if (!isSummaryCall(context)) return fauxAssistantMessage("answer");
				summaryCalls.push(context);
				return fauxAssistantMessage("SUMMARY");
			}),
		);
		await h.runtime.settled();
		for (let i = 1; i <= 4; i++) await h.session.prompt(`current question ${i}`);
		await h.runtime.settled();
		await waitForPass(h);
		return { h, asked, summaryCalls, shown: ui.shown };
	}

	it("counts what was already due in it as earlier work: asked first, and declining makes only the new summary", async () => {
		const { h, asked, summaryCalls, shown } = await resumed(pick("No:"));
		expect(asked).toHaveLength(1);
		expect(asked[0]?.title).toMatch(/2 summaries in 1 session/);
		expect(asked[0]?.callsBefore).toBe(0);
		expect(summaryCalls).toHaveLength(1);
		expect(userText(summaryCalls[0] as Context)).toContain("current question 4");
		expect(userText(summaryCalls[0] as Context)).not.toContain("past session 1 question 1");
		await h.session.prompt("/pbot summaries");
		const status = shown.filter((x) => x.kind === "notify:info").at(-1)?.text ?? "";
		expect(status).toContain("This session's new work: 0 summaries due");
		expect(status).toMatch(/Earlier work: 2 summaries in 1 session \(about/);
		expect(status).toContain("Earlier work is not summarized (off)");
	});

	it("accepting makes the earlier ones too", async () => {
		const { summaryCalls } = await resumed(pick("Yes:"));
		expect(summaryCalls).toHaveLength(3);
		expect(summaryCalls.filter((c) => userText(c).includes("past session 1 question"))).toHaveLength(2);
	});
});

describe("the footer during long work", () => {
	it("shows the start-up ingest's progress from 0 of N, and clears it at the end", async () => {
		const root = await pastHistory(6);
		const { h, shown } = await piAnswering(root, () => undefined);
		await h.runtime.settled();
		const statuses = shown.filter((s) => s.kind === "status:pbot-progress").map((s) => s.text);
		expect(statuses[0]).toBe("pbot: reading sessions 0/6");
		expect(statuses.at(-1)).toBe("(cleared)");
	});

	it("says whom the start-up ingest waits for while another pbot process reads the same sessions, then reads what is left", async () => {
		const root = await pastHistory(9);
		const workspace = join(root, "workspace");
		await mkdir(join(workspace, ".pi", "pbot"), { recursive: true });
		// The lease as a live pbot process of this host holds it (this test's parent: alive, not this process).
		const lease = join(workspace, ".pi", "pbot", "ingest.lock");
		await writeFile(
			lease,
			JSON.stringify({ pid: process.ppid, host: hostname(), at: "2026-12-06T05:40:00.000Z", token: "theirs", scope: folderScope(dirname(lease)) }),
		);
		const { h, shown } = await piAnswering(root, () => undefined);
		const statuses = () => shown.filter((s) => s.kind === "status:pbot-progress").map((s) => s.text);
		await waitFor(() => statuses().length > 0, "the footer");
		expect(statuses()).toEqual([`pbot: waiting for another pbot process (pid ${process.ppid}, since 05:40:00 UTC) that is reading this workspace's sessions`]);
		await rm(lease);
		await h.runtime.settled();
		// Nobody archived them meanwhile: the wait is cleared, then they are read here.
		expect(statuses().slice(1, 3)).toEqual(["(cleared)", "pbot: reading sessions 0/9"]);
		expect(statuses().at(-1)).toBe("(cleared)");
	});
});

describe("after the start's ingest", () => {
	it("gets the search text ready in the background (made again here after it was deleted, with its progress), reading no archive", async () => {
		const root = await pastHistory(6);
		const first = await piAnswering(root, () => undefined);
		await first.h.runtime.settled();
		await first.h.dispose();
		harnesses.splice(harnesses.indexOf(first.h), 1);
		const text = join(root, "workspace", ".pi", "pbot", "text");
		await rm(text, { recursive: true });
		const { h, shown } = await piAnswering(root, () => undefined);
		await h.runtime.settled();
		// No query was made: the start did it.
		expect((await readdir(text)).filter((n) => n.endsWith(".text"))).toHaveLength(6);
		const statuses = shown.filter((s) => s.kind === "status:pbot-progress").map((s) => s.text);
		expect(statuses.some((t) => /^pbot: making search text \d+\/6$/.test(t))).toBe(true);
		expect(statuses.at(-1)).toBe("(cleared)");
		expect(h.runtime.serviceFor({ cwd: h.workspace, sessionId: "x", agentDir: h.agentDir }).sessionsInMemory).toBe(0);
	});
});

describe("/pbot summaries", () => {
	it("shows the backlog and the answer, switches backfill on and off, and sets the threshold", async () => {
		const root = await pastHistory(3);
		const { h, shown } = await piAnswering(root, () => undefined);
		await h.runtime.settled();
		const said = async (command: string) => {
			const before = shown.length;
			await h.session.prompt(command);
			return shown
				.slice(before)
				.filter((s) => s.kind.startsWith("notify"))
				.map((s) => `${s.kind}: ${s.text}`)
				.join("\n");
		};
		const status = await said("/pbot summaries");
		expect(status).toContain("This session's new work: 0 summaries due");
		expect(status).toMatch(/Earlier work: 6 summaries in 3 sessions \(about [\d,.]+k? input tokens\) due/);
		expect(status).toContain("No answer yet: a backlog above 50 call(s) is asked about before it starts (once per Pi start until answered");
		expect(await said("/pbot summaries on")).toContain("on for this workspace");
		expect(await said("/pbot summaries")).toContain("Earlier work is summarized (on)");
		expect(await said("/pbot summaries off")).toContain("off for this workspace");
		expect(await said("/pbot summaries threshold 200")).toContain("above 200 call(s)");
		expect((await settingsOf(root)).summaries).toEqual({ backfill: "off", threshold: 200 });
		expect(await said("/pbot summaries threshold lots")).toMatch(/^notify:warning: .*threshold is a number/);
		expect(await said("/pbot summaries maybe")).toMatch(/^notify:warning: Usage: \/pbot summaries/);
	});
});
