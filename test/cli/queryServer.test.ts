/**
 * The workspace's query server (`src/cli/queryServer/`), through the built bin as people run it:
 * the first query command starts one, the next ones are answered by it with exactly what their own
 * process would print, it sees what changed since, and it ends when asked, when idle, when its
 * socket goes, and when a command of another build asks. A server killed or turned off costs
 * nothing but speed.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { chown, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { idleMsOf, serverWanted, socketOf, workspaceArgument } from "../../src/cli/queryServer/address.ts";
import { askControl, askServer } from "../../src/cli/queryServer/client.ts";
import type { ServerHello } from "../../src/cli/queryServer/messages.ts";
import { FIXTURES_DIR } from "../helpers/fixtures.ts";
import { isAlive as alive } from "../../src/storage/history-files/fileLock.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureWorkspace, generatedWorkspace } from "../helpers/workspace.ts";

const exec = promisify(execFile);
const BIN = join(process.cwd(), "bin", "pbot-history.cjs");

interface Run {
	readonly code: number;
	readonly stdout: string;
	readonly stderr: string;
}

/** The bin in `cwd`, with servers on (`server: "off"`: none asked, none started). */
async function bin(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
	try {
		const { stdout, stderr } = await exec(process.execPath, [BIN, ...args], {
			cwd,
			env: { ...process.env, PBOT_HISTORY_SERVER: "on", PBOT_HISTORY_SERVER_IDLE: "60", ...env },
		});
		return { code: 0, stdout, stderr };
	} catch (err) {
		const e = err as { code: number; stdout: string; stderr: string };
		return { code: e.code, stdout: e.stdout, stderr: e.stderr };
	}
}

/** The workspace's server once it has read the history (`undefined` until then). */
async function ready(workspace: string): Promise<ServerHello> {
	const socket = socketOf(workspace) as string;
	return waitFor(
		async () => {
			const hello = await askControl(socket, "status");
			return hello && !hello.warming ? hello : undefined;
		},
		"the query server to be ready",
		20_000,
	);
}

describe("the query server", () => {
	let ws: Awaited<ReturnType<typeof fixtureWorkspace>>;
	/** The fixture session held back, added during a test. */
	let heldBack: string;
	const pids: number[] = [];

	beforeAll(async () => {
		ws = await fixtureWorkspace("pbot-server-");
		heldBack = (await readdir(ws.sessions))
			.filter((n) => n.endsWith(".jsonl"))
			.sort()
			.at(-1) as string;
		await rename(join(ws.sessions, heldBack), join(ws.root, heldBack));
	});
	afterEach(async () => {
		// Every server a test started ends with it.
		const socket = socketOf(ws.workspace) as string;
		const hello = await askControl(socket, "status");
		if (hello) pids.push(hello.pid);
		await askControl(socket, "stop");
		for (const pid of pids.splice(0)) await waitFor(() => !alive(pid), `server ${pid} to end`);
	});
	afterAll(() => ws.cleanup());

	const queries = (sessions: string) => [
		["search", "owner", "-s", sessions],
		["search", "owner", "-s", sessions, "--json"],
		["search", "owner", "-s", sessions, "--limit", "2", "--offset", "1"],
		["sessions", "-s", sessions],
		["sessions", "-s", sessions, "--json"],
		["search", "owner", "-s", sessions, "--from", "yesterday"],
		["read", "qa_nothing_like_this_id", "-s", sessions],
		["search", "no such words anywhere", "-s", sessions],
	];

	it("starts with the first query, then answers the next ones exactly as their own process would", async () => {
		const first = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"]);
		expect(first.code).toBe(0);
		const started = await ready(ws.workspace);
		expect(started.keptBytes).toBeGreaterThan(0);
		const socket = socketOf(ws.workspace) as string;
		// The owner's alone.
		expect(statSync(socket).mode & 0o077).toBe(0);

		const ids = JSON.parse((await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions", "--json"], { PBOT_HISTORY_SERVER: "off" })).stdout) as {
			groups: { hits: { id: string }[] }[];
		};
		const qaId = ids.groups.flatMap((g) => g.hits)[0]?.id as string;
		const all = [...queries("pi-sessions"), ["read", qaId, "-s", "pi-sessions"], ["read", qaId, "-s", "pi-sessions", "--json"]];
		for (const args of all) {
			const own = await bin(ws.workspace, args, { PBOT_HISTORY_SERVER: "off", COLUMNS: "90" });
			const served = await bin(ws.workspace, args, { COLUMNS: "90" });
			expect(served, args.join(" ")).toEqual(own);
		}
		// Each was answered by the server, not by a process that found none.
		const after = (await askControl(socket, "status")) as ServerHello;
		expect(after.pid).toBe(started.pid);
		expect(after.answered - started.answered).toBe(all.length);
	});

	it("answers from the sessions as they are now: a session added since is found", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"]);
		const server = await ready(ws.workspace);
		const before = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions", "--json"]);
		await cp(join(ws.root, heldBack), join(ws.sessions, heldBack));
		try {
			const served = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions", "--json"]);
			const own = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions", "--json"], { PBOT_HISTORY_SERVER: "off" });
			expect(served).toEqual(own);
			expect((JSON.parse(served.stdout) as { total: number }).total).toBeGreaterThan((JSON.parse(before.stdout) as { total: number }).total);
			expect(((await askControl(socketOf(ws.workspace) as string, "status")) as ServerHello).answered).toBe(server.answered + 2);
		} finally {
			await rm(join(ws.sessions, heldBack));
		}
	});

	it("ends on `server stop`, removing its socket; `server` says whether one runs", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"]);
		const server = await ready(ws.workspace);
		const status = await bin(ws.workspace, ["server"]);
		expect(status.stdout).toContain(`running (pid ${server.pid})`);
		const stop = await bin(ws.workspace, ["server", "stop"]);
		expect(stop.stdout).toContain(`Stopped the query server of ${ws.workspace} (pid ${server.pid})`);
		await waitFor(() => !alive(server.pid), "the server to end");
		expect(existsSync(socketOf(ws.workspace) as string)).toBe(false);
		expect((await bin(ws.workspace, ["server"])).stdout).toContain("No query server for");
		expect((await bin(ws.workspace, ["server", "restart"])).code).toBe(2);
	});

	it("ends after its idle time", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"], { PBOT_HISTORY_SERVER_IDLE: "2" });
		const server = await ready(ws.workspace);
		await waitFor(() => !alive(server.pid), "the idle server to end", 15_000);
		expect(existsSync(socketOf(ws.workspace) as string)).toBe(false);
	});

	it("ends when its socket goes (the history folder deleted)", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"]);
		const server = await ready(ws.workspace);
		await rm(socketOf(ws.workspace) as string);
		await waitFor(() => !alive(server.pid), "the server to see its socket gone", 15_000);
	});

	it("killed, leaves a socket nobody listens on: the next query answers by itself and starts another", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"]);
		const killed = await ready(ws.workspace);
		process.kill(killed.pid, "SIGKILL");
		await waitFor(() => !alive(killed.pid), "the killed server to be gone");
		expect(existsSync(socketOf(ws.workspace) as string)).toBe(true);
		const own = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"], { PBOT_HISTORY_SERVER: "off" });
		expect(await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"])).toEqual(own);
		const next = await ready(ws.workspace);
		expect(next.pid).not.toBe(killed.pid);
	});

	it("declines a command of another build and ends, and one naming another workspace", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"]);
		const server = await ready(ws.workspace);
		const socket = socketOf(ws.workspace) as string;
		const writes: string[] = [];
		const io = { write: (_fd: 1 | 2, text: string) => void writes.push(text) };
		const request = { argv: ["sessions", "-s", "pi-sessions"], cwd: ws.workspace, env: {}, color: false, status: false };
		expect(await askServer(socket, { ...request, argv: ["sessions", "-w", ws.root], build: server.build }, io)).toEqual({ kind: "declined", why: "workspace" });
		expect(await askServer(socket, { ...request, argv: ["ingest"], build: server.build }, io)).toEqual({ kind: "declined", why: "command" });
		expect(await askServer(socket, { ...request, build: "another build" }, io)).toEqual({ kind: "declined", why: "build" });
		expect(writes).toEqual([]);
		await waitFor(() => !alive(server.pid), "the server of the older build to end");
	});

	it("turned off (PBOT_HISTORY_SERVER=off), none is started", async () => {
		const run = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"], { PBOT_HISTORY_SERVER: "off" });
		expect(run.code).toBe(0);
		await new Promise((r) => setTimeout(r, 1500));
		expect(existsSync(socketOf(ws.workspace) as string)).toBe(false);
		expect((await bin(ws.workspace, ["server"], { PBOT_HISTORY_SERVER: "off" })).stdout).toContain("PBOT_HISTORY_SERVER turns them off");
	});

	it("reads Pi's folder as the command's own environment says: its HOME, a PI_CODING_AGENT_DIR relative to its folder", async () => {
		// A workspace of its own, with Pi's folder for it under two homes, other sessions in each.
		const root = await mkdtemp(join(tmpdir(), "pbot-server-home-"));
		const workspace = join(root, "project");
		const native = (agent: string) => join(agent, "sessions", `--${workspace.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
		const names = (await readdir(FIXTURES_DIR)).filter((n) => n.endsWith(".jsonl") && n.startsWith("2026")).sort();
		const home = async (name: string, files: readonly string[]) => {
			const dir = native(join(root, name, ".pi", "agent"));
			await mkdir(dir, { recursive: true });
			for (const file of files) {
				const [first, ...rest] = (await readFile(join(FIXTURES_DIR, file), "utf8")).split("\n");
				await writeFile(join(dir, file), [JSON.stringify({ ...JSON.parse(first as string), cwd: workspace }), ...rest].join("\n"));
			}
			return join(root, name);
		};
		try {
			const homeA = await home("homeA", names.slice(0, 2));
			const homeC = await home("homeC", names.slice(2, 4));
			await home("homeD", names.slice(4, 6));
			const sub = join(workspace, "sub");
			await mkdir(sub, { recursive: true });
			await bin(workspace, ["sessions"], { HOME: homeA });
			const server = await ready(workspace);
			// Through the server first: had it read its own HOME's folder, these sessions would be missing.
			for (const [cwd, env, total] of [
				[workspace, { HOME: homeC }, 4],
				[sub, { HOME: homeA, PI_CODING_AGENT_DIR: "../../homeD/.pi/agent" }, 6],
			] as const) {
				const args = ["sessions", "-w", workspace, "--json"];
				const served = await bin(cwd, args, env);
				expect((JSON.parse(served.stdout) as { total: number }).total).toBe(total);
				expect(served).toEqual(await bin(cwd, args, { ...env, PBOT_HISTORY_SERVER: "off" }));
			}
			expect(((await askControl(socketOf(workspace) as string, "status")) as ServerHello).answered).toBe(server.answered + 2);
			await askControl(socketOf(workspace) as string, "stop");
			await waitFor(() => !alive(server.pid), "the server to end");
		} finally {
			await rm(root, { recursive: true, force: true });
		}
	});

	it("stopped (SIGSTOP), costs a query its wait for a hello, which then answers by itself and starts a server that takes the socket over", async () => {
		await bin(ws.workspace, ["sessions", "-s", "pi-sessions"]);
		const stopped = await ready(ws.workspace);
		process.kill(stopped.pid, "SIGSTOP");
		try {
			const socket = socketOf(ws.workspace) as string;
			const said = await bin(ws.workspace, ["server"]);
			expect(said.stdout).toContain("does not answer (stopped or hung?)");
			const own = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"], { PBOT_HISTORY_SERVER: "off" });
			expect(await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"])).toEqual(own);
			const next = await ready(ws.workspace);
			expect(next.pid).not.toBe(stopped.pid);
			pids.push(next.pid);
			expect(statSync(socket).isSocket()).toBe(true);
		} finally {
			process.kill(stopped.pid, "SIGCONT");
		}
		// Running again, it finds its socket taken over, and ends.
		await waitFor(() => !alive(stopped.pid), "the stopped server to end once it runs again", 15_000);
	});

	it("is not asked when its socket is another user's (root in a workspace where another user queried)", async () => {
		if (process.getuid?.() !== 0) return; // (only root can make a socket another user's)
		const socket = socketOf(ws.workspace) as string;
		const { createServer } = await import("node:net");
		// One that would answer, with its own rights: what it says must not be printed.
		const theirs = createServer((c) => {
			c.write(
				`${JSON.stringify({ t: "hello", pid: 1, workspace: ws.workspace, build: "theirs", since: 0, idleUntil: 0, keptBytes: 0, answered: 0, warming: false })}\n`,
			);
			c.on("data", () => c.end(`${JSON.stringify({ t: "done", code: 0, writes: [[1, "answered by another user's server"]] })}\n`));
		});
		await new Promise<void>((ok) => theirs.listen(socket, () => ok()));
		try {
			await chown(socket, 65534, 65534);
			const own = await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"], { PBOT_HISTORY_SERVER: "off" });
			expect(await bin(ws.workspace, ["search", "owner", "-s", "pi-sessions"])).toEqual(own);
			// Not replaced by a server of this user's.
			await new Promise((r) => setTimeout(r, 1500));
			expect(statSync(socket).uid).toBe(65534);
		} finally {
			await new Promise((ok) => theirs.close(ok));
			await rm(socket, { force: true });
		}
	});

	it("started twice at once, one stays", async () => {
		const first = JSON.stringify({ argv: ["sessions", "-s", "pi-sessions"], cwd: ws.workspace, workspace: ws.workspace });
		const children = [0, 1].map(() =>
			spawn(process.execPath, [BIN, "__query-server", first], { cwd: ws.workspace, stdio: "ignore", env: { ...process.env, PBOT_HISTORY_SERVER: "on" } }),
		);
		for (const child of children) pids.push(child.pid as number);
		const server = await ready(ws.workspace);
		await waitFor(() => children.filter((c) => alive(c.pid as number)).length === 1, "one server to be left", 15_000);
		expect(alive(server.pid)).toBe(true);
	});
});

describe("the query server's progress", () => {
	it("sends a command's progress to a client whose stderr is a terminal, and clears it before the answer", async () => {
		const made = await generatedWorkspace("pbot-server-progress-");
		try {
			const day = Date.UTC(2026, 0, 1);
			await made.write(1, { profile: "chat", targetBytes: 20_000, startMs: day });
			const args = ["search", "the", "-s", "sessions", "--agent-dir", "agent", "--json"];
			expect((await bin(made.workspace, args)).code).toBe(0);
			const server = await ready(made.workspace);
			// New session files the next search reads first: enough of them to show how far it is.
			for (let n = 2; n < 10; n++) await made.write(n, { profile: "chat", targetBytes: 20_000, startMs: day + n * 3_600_000 });
			const shown: (string | undefined)[] = [];
			const writes: string[] = [];
			const asked = await askServer(
				socketOf(made.workspace) as string,
				{ argv: args, cwd: made.workspace, env: {}, color: false, status: true, build: server.build },
				{ write: (_fd, text) => void writes.push(text), status: (text) => void shown.push(text) },
			);
			expect(asked).toEqual({ kind: "answered", code: 0 });
			expect(shown[0]).toMatch(/^pbot: reading sessions 0\/\d+$/);
			expect(shown.at(-1)).toBeUndefined();
			// The answer is what the command prints alone, now that the files are read.
			const own = await bin(made.workspace, args, { PBOT_HISTORY_SERVER: "off" });
			expect(writes.join("")).toBe(own.stdout.replace(/\n$/, ""));
			await askControl(socketOf(made.workspace) as string, "stop");
			await waitFor(() => !alive(server.pid), "the server to end");
		} finally {
			await rm(made.workspace, { recursive: true, force: true });
		}
	});
});

describe("what a query server is asked with", () => {
	it("reads the workspace a command names as the CLI does", () => {
		expect(workspaceArgument(["search", "x"], "/a")).toBe("/a");
		expect(workspaceArgument(["search", "x", "-w", "b"], "/a")).toBe("/a/b");
		expect(workspaceArgument(["search", "x", "--workspace", "/c"], "/a")).toBe("/c");
		expect(workspaceArgument(["search", "x", "--workspace=../d"], "/a/b")).toBe("/a/d");
		expect(workspaceArgument(["search", "-wb", "x"], "/a")).toBe("/a/b");
		expect(workspaceArgument(["search", "--", "-w", "b"], "/a")).toBe("/a");
	});

	it("is off on request and on Windows; its idle time is read in seconds", () => {
		expect(serverWanted({}, "linux")).toBe(true);
		for (const off of ["off", "0", "no", "false", "OFF "]) expect(serverWanted({ PBOT_HISTORY_SERVER: off }, "linux")).toBe(false);
		expect(serverWanted({}, "win32")).toBe(false);
		expect(idleMsOf({ PBOT_HISTORY_SERVER_IDLE: "30" })).toBe(30_000);
		expect(idleMsOf({ PBOT_HISTORY_SERVER_IDLE: "soon" })).toBe(600_000);
		expect(idleMsOf({})).toBe(600_000);
		// Longer than a timer can wait (it would fire at once): as long as one can.
		expect(idleMsOf({ PBOT_HISTORY_SERVER_IDLE: "3000000" })).toBe(2 ** 31 - 1);
	});

	it("has no socket where the path would be too long for one", () => {
		expect(socketOf("/short")).toBe("/short/.pi/pbot/query-server.sock");
		expect(socketOf(`/${"x".repeat(120)}`)).toBeUndefined();
		// Room for a starting server's own socket, its pid in the name: 92 bytes at most.
		const at = (bytes: number) => `/${"x".repeat(bytes - 1 - "/.pi/pbot/query-server.sock".length)}`;
		expect(socketOf(at(92))?.length).toBe(92);
		expect(socketOf(at(93))).toBeUndefined();
	});
});
