import { execFileSync, spawn } from "node:child_process";
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { jsonl, reply, user } from "../helpers/entries.ts";
import { fixturePath } from "../helpers/fixtures.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

async function startWatch(args: string[]) {
	const ws = await fixtureWorkspace();
	cleanups.push(ws.cleanup);
	const out: string[] = [];
	const err: string[] = [];
	const controller = new AbortController();
	const done = runCli(["watch", "-w", ws.workspace, "-s", ws.sessions, ...args], {
		stdout: (t) => void out.push(t),
		stderr: (t) => void err.push(t),
		cwd: ws.workspace,
		signal: controller.signal,
	});
	cleanups.push(async () => {
		controller.abort();
		await done;
	});
	return {
		ws,
		out,
		err,
		stop: async () => {
			controller.abort();
			return done;
		},
	};
}

describe("pbot-history watch", () => {
	it("shows only new Q&A, as a session file grows, and stops on its signal", async () => {
		const { ws, out, stop } = await startWatch([]);
		await waitFor(() => out.some((l) => /^Watching \d+ session file\(s\)/.test(l)), "the watch to start");
		// A new session appears and grows, line by line, like Pi writes it.
		const text = await readFile(fixturePath("steer-followup-abort"), "utf8");
		const lines = text.split("\n");
		lines[0] = lines[0]!.replace(/"id":"[^"]+"/, '"id":"0190dddd-0000-7000-8000-000000000001"');
		const file = join(ws.sessions, "2026-04-01T00-00-00-000Z_0190dddd-0000-7000-8000-000000000001.jsonl");
		await writeFile(file, `${lines.slice(0, 6).join("\n")}\n`);
		await waitFor(() => out.some((l) => l.includes("Build the project")), "the first new Q&A (open)");
		expect(out.filter((l) => l.startsWith("20")).every((l) => !l.includes("topic-0"))).toBe(true); // nothing old was replayed
		await appendFile(file, `${lines.slice(6).join("\n")}`);
		await waitFor(() => out.some((l) => l.includes("Sorry, too long") || l.includes("Short version")), "the last Q&A");
		expect(await stop()).toBe(0);
	});

	it("shows a Q&A appended to a session that was there before it began (only files that change are followed)", async () => {
		const { ws, out, stop } = await startWatch([]);
		await waitFor(() => out.some((l) => /^Watching \d+ session file\(s\)/.test(l)), "the watch to start");
		// The last entry of an ingested session, and a question and answer after it, as Pi appends them.
		const name = (await readdir(ws.sessions)).find((n) => n.endsWith(".jsonl") && !n.includes("legacy")) as string;
		const lines = (await readFile(join(ws.sessions, name), "utf8")).trim().split("\n");
		const last = (JSON.parse(lines.at(-1) as string) as { id: string }).id;
		await appendFile(
			join(ws.sessions, name),
			jsonl([user("a0000001", last, "Where do herons nest?"), reply("a0000002", "a0000001", "In tall trees near water.")]),
		);
		const line = await waitFor(() => out.find((l) => l.includes("Where do herons nest?")), "the appended Q&A");
		expect(line).toContain("A: In tall trees near water.");
		// Nothing archived before was shown again.
		expect(out.filter((l) => l.startsWith("20"))).toHaveLength(1);
		expect(await stop()).toBe(0);
	});

	it("follows a session folder removed and made again (a person or a sync tool): the sessions written in it then are shown", async () => {
		const { ws, out, stop } = await startWatch([]);
		await waitFor(() => out.some((l) => /^Watching \d+ session file\(s\)/.test(l)), "the watch to start");
		await rm(ws.sessions, { recursive: true });
		// Long enough for the watcher to see the folder go.
		await new Promise((r) => setTimeout(r, 700));
		await mkdir(ws.sessions);
		const text = (await readFile(fixturePath("steer-followup-abort"), "utf8")).replace(/"id":"[^"]+"/, '"id":"0190dddd-0000-7000-8000-000000000006"');
		await writeFile(join(ws.sessions, "2026-04-07T00-00-00-000Z_0190dddd-0000-7000-8000-000000000006.jsonl"), text);
		await waitFor(() => out.some((l) => l.includes("Build the project")), "the session written in the folder made again");
		expect(await stop()).toBe(0);
	});

	it("shows session text with its control characters made visible, never sent to the terminal", async () => {
		const { ws, out, stop } = await startWatch([]);
		await waitFor(() => out.some((l) => /^Watching \d+ session file\(s\)/.test(l)), "the watch to start");
		const text = (await readFile(fixturePath("steer-followup-abort"), "utf8"))
			.replace(/"id":"[^"]+"/, '"id":"0190dddd-0000-7000-8000-000000000004"')
			// A pasted log: colour, a window title (OSC … BEL) and a bell.
			.replace("Build the project", "Build \\u001b[31mRED\\u001b[0m \\u001b]0;TITLE\\u0007 the project");
		await writeFile(join(ws.sessions, "2026-04-03T00-00-00-000Z_0190dddd-0000-7000-8000-000000000004.jsonl"), text);
		const line = await waitFor(() => out.find((l) => l.includes("RED")), "the Q&A with escapes");
		expect(line).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
		expect(line).toContain("␛[31mRED␛[0m ␛]0;TITLE␇");
		expect(await stop()).toBe(0);
	});

	it("waits for Pi's folder of the workspace when it is not there yet, and follows the first session made in it", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-watch-new-"));
		cleanups.push(() => rm(root, { recursive: true, force: true }));
		const workspace = join(root, "project");
		const agentDir = join(root, "agent");
		await mkdir(workspace);
		const folder = nativeSessionDir(workspace, agentDir);
		const out: string[] = [];
		const controller = new AbortController();
		const done = runCli(["watch", "-w", workspace, "--agent-dir", agentDir], {
			stdout: (t) => void out.push(t),
			stderr: () => {},
			cwd: workspace,
			signal: controller.signal,
		});
		cleanups.push(async () => {
			controller.abort();
			await done;
		});
		await waitFor(() => out.some((l) => l.startsWith("Watching 0 session file(s); waiting for ")), "the watch to start");
		expect(out.join("\n")).toContain(`waiting for ${folder} (not there yet: Pi makes it with the first session)`);
		// Pi starts in the workspace: its folder, then the session file, the header naming the workspace.
		const lines = (await readFile(fixturePath("steer-followup-abort"), "utf8")).split("\n");
		lines[0] = lines[0]!.replace(/"cwd":"[^"]*"/, `"cwd":${JSON.stringify(workspace)}`);
		await mkdir(folder, { recursive: true });
		await writeFile(join(folder, "2026-04-01T00-00-00-000Z_0190dddd-0000-7000-8000-000000000002.jsonl"), `${lines.join("\n")}`);
		await waitFor(() => out.some((l) => l.includes("Build the project")), "the new session's Q&A");
		// The folder is watched from then on (the first session is followed only once the new watcher is
		// ready): a later session (another Pi) is followed as it appears.
		const more = (await readFile(fixturePath("many-qa-72"), "utf8")).split("\n");
		more[0] = more[0]!.replace(/"cwd":"[^"]*"/, `"cwd":${JSON.stringify(workspace)}`).replace(/"id":"[^"]+"/, '"id":"0190dddd-0000-7000-8000-000000000003"');
		// Made as any file is, empty and then written: its "add" comes before there is a header to read.
		const later = join(folder, "2026-04-02T00-00-00-000Z_0190dddd-0000-7000-8000-000000000003.jsonl");
		await writeFile(later, "");
		await new Promise((r) => setTimeout(r, 400));
		await writeFile(later, `${more.join("\n")}`);
		await waitFor(() => out.some((l) => l.includes("topic-0")), "the later session's Q&A");
		controller.abort();
		expect(await done).toBe(0);
	});

	it("as the built bin, with a FIFO named like a session and a link loop in the folder: says so, neither hangs nor ends, and follows the real sessions", {
		timeout: 60_000,
	}, async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		execFileSync("mkfifo", [join(ws.sessions, "2026-04-05T00-00-00-000Z_0190dddd-0000-7000-8000-00000000fifo.jsonl")]);
		await symlink(join(ws.sessions, "loop"), join(ws.sessions, "loop"));
		const child = spawn(process.execPath, ["bin/pbot-history.cjs", "watch", "-w", ws.workspace, "-s", ws.sessions, "--agent-dir", join(ws.root, "agent")], {
			cwd: process.cwd(),
			stdio: ["ignore", "pipe", "pipe"],
		});
		// A hang is a blocked process: killed by the test, not waited on for ever.
		const killer = setTimeout(() => child.kill("SIGKILL"), 45_000);
		cleanups.push(async () => {
			clearTimeout(killer);
			child.kill("SIGKILL");
		});
		let out = "";
		let err = "";
		child.stdout.on("data", (c: Buffer) => void (out += c.toString("utf8")));
		child.stderr.on("data", (c: Buffer) => void (err += c.toString("utf8")));
		const ended = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
		await waitFor(() => /^Watching \d+ session file\(s\)/m.test(out) || child.exitCode !== null, "the watch to start", 40_000);
		expect(child.exitCode, err).toBeNull();
		const text = (await readFile(fixturePath("steer-followup-abort"), "utf8")).replace(/"id":"[^"]+"/, '"id":"0190dddd-0000-7000-8000-000000000005"');
		await writeFile(join(ws.sessions, "2026-04-06T00-00-00-000Z_0190dddd-0000-7000-8000-000000000005.jsonl"), text);
		await waitFor(() => out.includes("Build the project") || child.exitCode !== null, "the new session's Q&A", 40_000);
		expect(child.exitCode, err).toBeNull();
		expect(err).toMatch(/fifo\.jsonl is not a regular file/);
		child.kill("SIGINT");
		expect([0, 130]).toContain(await ended);
	});

	it("prints history events as NDJSON with --json", async () => {
		const { out, stop } = await startWatch(["--json"]);
		await waitFor(() => out.filter((l) => l.includes('"type":"BranchesObserved"')).length >= 17, "the replay of every session");
		for (const line of out) expect(() => JSON.parse(line)).not.toThrow();
		expect(out.some((l) => JSON.parse(l).type === "QaObserved")).toBe(true);
		expect(await stop()).toBe(0);
	});
});
