import { spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { exited as exitedChild, lineFrom, spawnChild } from "../durability/children/spawn.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

/** Pi's agent dir with a stored key for the faux provider and the model declared in models.json. */
async function agentDirWithFaux(root: string): Promise<string> {
	const agentDir = join(root, "agent");
	await import("node:fs/promises").then((fs) => fs.mkdir(agentDir, { recursive: true }));
	await writeFile(join(agentDir, "auth.json"), JSON.stringify({ faux: { type: "api_key", key: "stored-key" } }));
	await writeFile(
		join(agentDir, "models.json"),
		JSON.stringify({
			providers: {
				faux: {
					baseUrl: "http://127.0.0.1:9",
					api: "faux-cli-api",
					apiKey: "UNUSED_ENV_NAME",
					models: [
						{
							id: "faux-1",
							name: "Faux",
							reasoning: false,
							input: ["text"],
							cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
							contextWindow: 64000,
							maxTokens: 1024,
						},
					],
				},
			},
		}),
	);
	return agentDir;
}

async function summariesOf(workspace: string) {
	const dir = historyDir(workspace);
	const all = await Promise.all((await readdir(dir)).map(async (n) => JSON.parse(await readFile(join(dir, n), "utf8")) as SessionArchive));
	return all.flatMap((a) => Object.values(a.summaries));
}

describe("pbot-history summarize", () => {
	it("makes every pending summary with the stored key, reporting progress", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithFaux(ws.root);
		const faux = registerFauxProvider({ api: "faux-cli-api", provider: "faux", models: [{ id: "faux-1" }] });
		cleanups.push(() => faux.unregister());
		faux.setResponses(Array.from({ length: 100 }, (_, i) => () => fauxAssistantMessage(`summary ${i + 1}`)));
		const out: string[] = [];
		const err: string[] = [];
		const code = await runCli(["summarize", "-w", ws.workspace, "-s", ws.sessions, "--agent-dir", agentDir, "--model", "faux/faux-1", "--json"], {
			stdout: (t) => void out.push(t),
			stderr: (t) => void err.push(t),
			cwd: ws.workspace,
		});
		expect(code).toBe(0);
		const report = JSON.parse(out.join(""));
		const all = await summariesOf(ws.workspace);
		expect(report).toMatchObject({ model: "faux/faux-1", made: all.length, failed: 0, remaining: 0, aborted: false });
		expect(faux.state.callCount).toBe(all.length);
		expect(all.every((s) => s.status === "ready" && s.model === "faux/faux-1")).toBe(true);
		expect(err.at(-1)).toBe(`pbot: summaries ${all.length}/${all.length}`);
		// Before any call: how many, roughly what they send, and with which model.
		expect(err[0]).toMatch(
			new RegExp(`^pbot: making ${all.length} summaries in \\d+ sessions? \\(about [\\d,.]+k? input tokens\\) with faux/faux-1; Ctrl\\+C stops`),
		);
		expect(err[1]).toBe(`pbot: summaries 0/${all.length}`);
	});

	it("explains a missing model or key with exit code 2", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithFaux(ws.root);
		const err: string[] = [];
		const io = { stdout: () => undefined, stderr: (t: string) => void err.push(t), cwd: ws.workspace };
		expect(await runCli(["summarize", "-s", ws.sessions, "--agent-dir", agentDir, "--model", "nobody/nothing"], io)).toBe(2);
		expect(err.join("")).toContain('Pi knows no model "nobody/nothing"');
		expect(await runCli(["summarize", "-s", ws.sessions, "--agent-dir", join(ws.root, "empty-agent")], io)).toBe(2);
		expect(err.join("")).toContain("no model: pass --model");
	});

	it("stops cleanly on Ctrl+C: exit 130, the summary in flight stays pending, the archives stay whole", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithFaux(ws.root);
		const child = spawn(
			process.execPath,
			["--import", "tsx", "test/cli/summarize-child.ts", "summarize", "-w", ws.workspace, "-s", ws.sessions, "--agent-dir", agentDir, "--model", "faux/faux-1"],
			{
				cwd: process.cwd(),
				env: { ...process.env, HOLD: "1" },
			},
		);
		let stderr = "";
		let stdout = "";
		child.stderr.on("data", (d) => (stderr += d));
		child.stdout.on("data", (d) => (stdout += d));
		const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
		await waitFor(() => stderr.includes("CALL 1"), "the first model call", 20_000);
		child.kill("SIGINT");
		expect(await exited).toBe(130);
		expect(stdout).toContain("Stopped");
		const all = await summariesOf(ws.workspace);
		expect(all.length).toBeGreaterThan(0);
		expect(all.every((s) => s.status === "pending")).toBe(true);
	});

	it("leaves the summaries of a session another pbot process is making to it, and says so", { timeout: 30_000 }, async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithFaux(ws.root);
		const quiet = { stdout: () => undefined, stderr: () => undefined, cwd: ws.workspace };
		expect(await runCli(["ingest", "-w", ws.workspace, "-s", ws.sessions], quiet)).toBe(0);
		// The session with the most summaries due is being summarized by another process (a real one).
		const dir = historyDir(ws.workspace);
		const archives = await Promise.all((await readdir(dir)).map(async (n) => JSON.parse(await readFile(join(dir, n), "utf8")) as SessionArchive));
		const dueIn = (a: SessionArchive) => Object.values(a.summaries).filter((s) => s.status === "pending").length;
		const busiest = archives.sort((x, y) => dueIn(y) - dueIn(x))[0] as SessionArchive;
		const go = join(ws.root, "go");
		const holder = spawnChild("summaryClaimChild.ts", [ws.workspace, busiest.session.sessionId, go]);
		// Whatever happens below, the holder does not outlive the test.
		cleanups.unshift(() => void holder.kill());
		await lineFrom(holder, "claimed");
		const faux = registerFauxProvider({ api: "faux-cli-api", provider: "faux", models: [{ id: "faux-1" }] });
		cleanups.push(() => faux.unregister());
		faux.setResponses(Array.from({ length: 100 }, (_, i) => () => fauxAssistantMessage(`summary ${i + 1}`)));
		const out: string[] = [];
		const io = { stdout: (t: string) => void out.push(t), stderr: () => undefined, cwd: ws.workspace };
		expect(await runCli(["summarize", "-w", ws.workspace, "-s", ws.sessions, "--agent-dir", agentDir, "--model", "faux/faux-1"], io)).toBe(0);
		const left = dueIn(busiest);
		expect(out.join("")).toMatch(
			new RegExp(`, ${left} still due \\(\\d+ model call\\(s\\)\\)\\. ${left} of them are in sessions another pbot process is summarizing now: left to it\\.$`),
		);
		// None of that session's summaries was made here.
		const after = JSON.parse(await readFile(join(dir, `${busiest.session.sessionId}.json`), "utf8")) as SessionArchive;
		expect(dueIn(after)).toBe(left);
		await writeFile(go, "");
		expect(await exitedChild(holder), holder.stderrText()).toMatchObject({ code: 0 });
	});
});
