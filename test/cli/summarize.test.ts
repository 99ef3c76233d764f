import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { registerOAuthProvider, unregisterOAuthProvider } from "@mariozechner/pi-ai/oauth";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { GIVE_UP_AFTER } from "../../src/services/history/summaries/summaryWorker.ts";
import { exited as exitedChild, lineFrom, spawnChild } from "../durability/children/spawn.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
	vi.unstubAllEnvs();
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

/** Every entry under a folder (recursively) with its kind and mode: what a run made or changed there shows. */
/** `pbot-history summarize` over a fixture workspace, with this agent dir and the rest of the flags. */
function summarizeArgs(ws: { workspace: string; sessions: string }, agentDir: string, ...rest: string[]): string[] {
	return ["summarize", "-w", ws.workspace, "-s", ws.sessions, "--agent-dir", agentDir, ...rest];
}

/** `summarize` with a new, empty agent dir and `model`: exit 2 saying `said`, the dir left empty. */
async function expectRefusedInEmptyAgentDir(
	ws: { root: string; workspace: string; sessions: string },
	name: string,
	model: string,
	said: string,
): Promise<void> {
	const dir = join(ws.root, name);
	await mkdir(dir);
	const err: string[] = [];
	expect(await runCli(summarizeArgs(ws, dir, "--model", model), { stdout: () => undefined, stderr: (t: string) => void err.push(t), cwd: ws.workspace })).toBe(
		2,
	);
	expect(err.join("\n")).toContain(said);
	expect(await listing(dir)).toEqual([]);
}

async function listing(dir: string): Promise<string[]> {
	const out: string[] = [];
	for (const name of (await readdir(dir, { recursive: true })).sort()) {
		const s = await stat(join(dir, name));
		out.push(`${name} ${s.isDirectory() ? "dir" : "file"} ${(s.mode & 0o777).toString(8)} ${s.size}`);
	}
	return out;
}

/**
 * An agent dir whose models.json declares a model of the built-in provider `anthropic` answered by
 * the faux provider (api `faux-nokey-api`) and gives no key: the key can only come from auth.json
 * or ANTHROPIC_API_KEY / ANTHROPIC_OAUTH_TOKEN, which the test clears.
 */
async function agentDirWithoutKey(root: string): Promise<string> {
	const agentDir = join(root, "agent-nokey");
	await mkdir(agentDir, { recursive: true });
	await writeFile(
		join(agentDir, "models.json"),
		JSON.stringify({
			providers: {
				anthropic: {
					models: [{ id: "faux-nokey", api: "faux-nokey-api", baseUrl: "http://127.0.0.1:9", contextWindow: 64000, maxTokens: 1024 }],
				},
			},
		}),
	);
	vi.stubEnv("ANTHROPIC_API_KEY", undefined);
	vi.stubEnv("ANTHROPIC_OAUTH_TOKEN", undefined);
	return agentDir;
}

/** The faux provider answering every call with `reply(n)` (n from 1); `keys` has the API key each call was given. */
function fauxAnswering(reply: (n: number) => ReturnType<typeof fauxAssistantMessage>, api = "faux-cli-api", provider = "faux", id = "faux-1") {
	const faux = registerFauxProvider({ api, provider, models: [{ id }] });
	cleanups.push(() => faux.unregister());
	const keys: (string | undefined)[] = [];
	faux.setResponses(
		Array.from({ length: 200 }, (_, i) => (_context: unknown, options: { apiKey?: string } | undefined) => {
			keys.push(options?.apiKey);
			return reply(i + 1);
		}),
	);
	return Object.assign(faux, { keys });
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
		const code = await runCli(summarizeArgs(ws, agentDir, "--model", "faux/faux-1", "--json"), {
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
		// An agent dir without settings: no default model, and nothing made there by asking.
		const empty = join(ws.root, "empty-agent");
		await mkdir(empty);
		expect(await runCli(["summarize", "-s", ws.sessions, "--agent-dir", empty], io)).toBe(2);
		expect(err.join("")).toContain("no model: pass --model");
		expect(await listing(empty)).toEqual([]);
	});

	it("stops before any call when the model's provider has no key: exit 2, the provider named, nothing made in the agent dir", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithoutKey(ws.root);
		const faux = fauxAnswering((n) => fauxAssistantMessage(`summary ${n}`), "faux-nokey-api", "anthropic", "faux-nokey");
		const before = await listing(agentDir);
		const err: string[] = [];
		const out: string[] = [];
		const io = { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd: ws.workspace };
		expect(await runCli(summarizeArgs(ws, agentDir, "--model", "anthropic/faux-nokey"), io)).toBe(2);
		const said = err.join("\n");
		expect(said).toContain('no API key for provider "anthropic" (model anthropic/faux-nokey)');
		expect(said).toContain("/login");
		expect(said).toContain(join(agentDir, "auth.json"));
		expect(faux.state.callCount).toBe(0);
		expect(out).toEqual([]);
		expect(await listing(agentDir)).toEqual(before);
		// Nothing was ingested either: the check comes first.
		expect(existsSync(historyDir(ws.workspace))).toBe(false);

		// The tester's case: a built-in model and an agent dir with nothing in it.
		await expectRefusedInEmptyAgentDir(ws, "emptyagent", "anthropic/claude-sonnet-4-5", 'no API key for provider "anthropic"');

		// With a key kept in auth.json (read, not locked nor rewritten), the same command makes the summaries.
		await writeFile(join(agentDir, "auth.json"), JSON.stringify({ anthropic: { type: "api_key", key: "stored-key" } }));
		const withKey = await listing(agentDir);
		expect(await runCli(summarizeArgs(ws, agentDir, "--model", "anthropic/faux-nokey"), io)).toBe(0);
		expect(faux.state.callCount).toBeGreaterThan(0);
		expect(new Set(faux.keys)).toEqual(new Set(["stored-key"]));
		expect(await listing(agentDir)).toEqual(withKey);

		// An expired Pi login is renewed as Pi renews it (under Pi's lock, into the existing auth.json:
		// a rotated refresh token kept only here would log Pi out), and nothing else is left there.
		const ws2 = await fixtureWorkspace();
		cleanups.push(ws2.cleanup);
		registerOAuthProvider({
			id: "anthropic",
			name: "Faux login",
			login: () => Promise.reject(new Error("no login in tests")),
			refreshToken: async (c) => ({ ...c, access: "renewed-token", refresh: "refresh-2", expires: Date.now() + 3_600_000 }),
			getApiKey: (c) => c.access,
		});
		cleanups.push(() => unregisterOAuthProvider("anthropic"));
		await writeFile(join(agentDir, "auth.json"), JSON.stringify({ anthropic: { type: "oauth", access: "expired-token", refresh: "refresh-1", expires: 0 } }));
		const keysBefore = faux.keys.length;
		const io2 = { ...io, cwd: ws2.workspace };
		expect(await runCli(summarizeArgs(ws2, agentDir, "--model", "anthropic/faux-nokey"), io2)).toBe(0);
		expect(new Set(faux.keys.slice(keysBefore))).toEqual(new Set(["renewed-token"]));
		expect(JSON.parse(await readFile(join(agentDir, "auth.json"), "utf8"))).toMatchObject({ anthropic: { access: "renewed-token", refresh: "refresh-2" } });
		expect((await listing(agentDir)).map((l) => l.split(" ")[0])).toEqual(["auth.json", "models.json"]);
	});

	it("checks --agent-dir and --model before touching anything: a missing agent dir stays missing, an existing one unchanged", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const err: string[] = [];
		const io = { stdout: () => undefined, stderr: (t: string) => void err.push(t), cwd: ws.workspace };
		const missing = join(ws.root, "no-such-agent");
		for (const model of [["--model", "faux/faux-1"], ["--model", "badformat"], []]) {
			err.length = 0;
			expect(await runCli(summarizeArgs(ws, missing, ...model), io)).toBe(2);
			expect(err.join("")).toMatch(/--agent-dir: .*no-such-agent does not exist|--model: expected provider\/id, got "badformat"/);
			expect(existsSync(missing)).toBe(false);
		}
		await expectRefusedInEmptyAgentDir(ws, "agent-empty", "badformat", '--model: expected provider/id, got "badformat"');
		const file = join(ws.root, "a-file");
		await writeFile(file, "");
		err.length = 0;
		expect(await runCli(summarizeArgs(ws, file, "--model", "faux/faux-1"), io)).toBe(2);
		expect(err.join("")).toContain("a-file is not a folder");
	});

	it("says why when every call fails: the error on stderr and in --json, exit 1, and that failing summaries are tried twice", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithFaux(ws.root);
		const faux = fauxAnswering(() => fauxAssistantMessage([], { stopReason: "error", errorMessage: "401 invalid x-api-key" }));
		const out: string[] = [];
		const err: string[] = [];
		const io = { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd: ws.workspace };
		const args = summarizeArgs(ws, agentDir, "--model", "faux/faux-1");
		expect(await runCli([...args, "--json"], io)).toBe(1);
		const report = JSON.parse(out.join(""));
		const calls = faux.state.callCount;
		// Four attempts failing alike with nothing made: the rest would too (37 were due; 64 calls and 90 s
		// against a real provider with a wrong key). Each failing summary is tried twice.
		expect(calls).toBe(GIVE_UP_AFTER);
		expect(report).toMatchObject({
			made: 0,
			failed: calls,
			calls,
			gaveUp: true,
			failedSummaries: calls / 2,
			errors: [{ message: "401 invalid x-api-key", count: calls }],
		});
		// Said when it first happens, then counted at the end.
		const first = err.indexOf("pbot: model error: 401 invalid x-api-key");
		expect(first).toBeGreaterThanOrEqual(0);
		expect(first).toBeLessThanOrEqual(3); // after the plan and the first progress line
		expect(first).toBeLessThan(err.indexOf(`pbot: model error: 401 invalid x-api-key (${calls} of ${calls} failed attempt(s))`));
		expect(err).toContain(`pbot: model error: 401 invalid x-api-key (${calls} of ${calls} failed attempt(s))`);
		expect(err.at(-1)).toBe(`pbot-history: no summary made: all ${calls} attempt(s) with faux/faux-1 failed (401 invalid x-api-key)`);

		// The text report says attempts and summaries apart, and why there are more calls than summaries.
		out.length = 0;
		err.length = 0;
		expect(await runCli(args, io)).toBe(1);
		expect(out.join("")).toContain(`Stopped after ${calls} attempts failed alike: the rest would too (fix the cause above and run again).`);
		expect(out.join("")).toContain(
			`0 summary(ies) made with faux/faux-1, ${calls} failed attempt(s): ${calls / 2} summary(ies) still failing (each is tried up to 2 times in a run, then left for the next), ${report.remaining} still due (${calls} model call(s)).`,
		);
		expect(err).toContain(`pbot: model error: 401 invalid x-api-key (${calls} of ${calls} failed attempt(s))`);

		// At a terminal's width, the report is wrapped to it (the same words).
		out.length = 0;
		expect(await runCli(args, { ...io, columns: 60 })).toBe(1);
		const lines = out.join("\n").split("\n");
		expect(lines.length).toBeGreaterThan(3);
		for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
		expect(lines.join(" ")).toContain(`Stopped after ${GIVE_UP_AFTER} attempts failed alike: the rest would too (fix the cause above and run again).`);
	});

	it("names the error of a partial failure and exits 0", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const agentDir = await agentDirWithFaux(ws.root);
		// The first summary's two attempts fail; every other call answers.
		fauxAnswering((n) => (n <= 2 ? fauxAssistantMessage([], { stopReason: "error", errorMessage: "529 overloaded" }) : fauxAssistantMessage(`summary ${n}`)));
		const out: string[] = [];
		const err: string[] = [];
		const io = { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd: ws.workspace };
		expect(await runCli(summarizeArgs(ws, agentDir, "--model", "faux/faux-1", "--json"), io)).toBe(0);
		const report = JSON.parse(out.join(""));
		expect(report.made).toBeGreaterThan(0);
		expect(report).toMatchObject({ failed: 2, failedSummaries: 1, errors: [{ message: "529 overloaded", count: 2 }] });
		expect(err).toContain("pbot: model error: 529 overloaded (2 of 2 failed attempt(s))");
		expect(err.some((l) => l.startsWith("pbot-history:"))).toBe(false);
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
		expect(await runCli(summarizeArgs(ws, agentDir, "--model", "faux/faux-1"), io)).toBe(0);
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
