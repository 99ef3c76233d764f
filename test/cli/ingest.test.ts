import { existsSync } from "node:fs";
import { execFile, spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { hostname } from "node:os";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { folderScope } from "../../src/storage/history-files/paths.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const exec = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

function capture(cwd: string) {
	const out: string[] = [];
	const err: string[] = [];
	return { io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd }, out, err };
}

describe("pbot-history ingest", () => {
	it("prints counts as JSON: sessions, Q&A, incomplete, branches, plans per level, rejected lines", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const { io, out } = capture(ws.workspace);
		expect(await runCli(["ingest", "--sessions", "pi-sessions", "--json"], io)).toBe(0);
		const report = JSON.parse(out.join(""));
		expect(report.totals).toMatchObject({ sessions: 17, branches: expect.any(Number) });
		const many = report.sessions.find((s: { qa: number }) => s.qa === 72);
		expect(many).toMatchObject({ incomplete: 0, branches: 1, plannedByLevel: [18, 4, 1], rejectedLines: 0 });
		expect(report.totals.rejectedLines).toBe(7);
		expect(report.totals.incomplete).toBeGreaterThanOrEqual(4);
	});

	it("counts a session once when the same session file is in two folders it reads", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const alone = capture(ws.workspace);
		expect(await runCli(["ingest", "--sessions", "pi-sessions", "--json"], alone.io)).toBe(0);
		const once = JSON.parse(alone.out.join(""));
		const twice = await fixtureWorkspace();
		cleanups.push(twice.cleanup);
		await mkdir(join(twice.workspace, "copies"));
		for (const name of await readdir(twice.sessions)) await writeFile(join(twice.workspace, "copies", name), await readFile(join(twice.sessions, name)));
		const both = capture(twice.workspace);
		expect(await runCli(["ingest", "--sessions", "pi-sessions", "--sessions", "copies", "--json"], both.io)).toBe(0);
		const report = JSON.parse(both.out.join(""));
		// The same sessions, Q&A and plans; the rejected lines are those of every file read (each copy's).
		expect({ ...report.totals, rejectedLines: 0 }).toEqual({ ...once.totals, rejectedLines: 0 });
		expect(report.totals.rejectedLines).toBe(2 * once.totals.rejectedLines);
		expect(new Set(report.sessions.map((s: { sessionId: string }) => s.sessionId)).size).toBe(report.sessions.length);
	});

	it("prints an aligned table for a person", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const { io, out } = capture(ws.workspace);
		expect(await runCli(["ingest", "-w", ws.workspace, "-s", ws.sessions], io)).toBe(0);
		const text = out.join("");
		expect(text).toMatch(/Ingested 17 session\(s\)/);
		expect(text).toMatch(/^total\s+\d+/m);
	});

	it("reads only what changed on the next ingest, and everything again on rebuild", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const run = async (command: string) => {
			const { io, out } = capture(ws.workspace);
			expect(await runCli([command, "--sessions", "pi-sessions", "--json"], io)).toBe(0);
			return JSON.parse(out.join("")) as { totals: { sessions: number; written: number }; unchangedFiles: number };
		};
		const first = await run("ingest");
		expect(first.totals.sessions).toBe(17);
		expect(first.unchangedFiles).toBe(0);
		const again = await run("ingest");
		expect(again.totals.sessions).toBe(0);
		// Every file that gave a session is checkpointed (the not-yet-written empty one is read again: it costs nothing).
		expect(again.unchangedFiles).toBeGreaterThanOrEqual(17);
		const rebuilt = await run("rebuild");
		expect(rebuilt.totals).toMatchObject({ sessions: 17, written: 0 });
		expect(rebuilt.unchangedFiles).toBe(0);

		const { io, out } = capture(ws.workspace);
		expect(await runCli(["ingest", "--sessions", "pi-sessions"], io)).toBe(0);
		expect(out.join("")).toMatch(/Ingested 0 session\(s\) .*\d+ file\(s\) unchanged since they were ingested, not read/);
	});

	it("exits 2 naming the workspace when it cannot be used (a file, not a folder), and leaves the file as it was", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const notAFolder = join(ws.root, "a-file");
		await writeFile(notAFolder, "not a workspace\n");
		for (const argv of [
			["ingest", "--workspace", notAFolder, "--sessions", ws.sessions],
			["search", "owner", "--workspace", notAFolder],
		]) {
			const { io, err } = capture(ws.root);
			expect(await runCli(argv, io)).toBe(2);
			expect(err.join("")).toBe(`pbot-history: --workspace: ${notAFolder} is not a folder`);
		}
		expect(await readFile(notAFolder, "utf8")).toBe("not a workspace\n");
	});

	it("stops on Ctrl+C: says so and what is left, exits 130, and the next ingest reads the rest", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const { io, out, err } = capture(ws.workspace);
		const before = process.listenerCount("SIGINT");
		const run = runCli(["ingest", "-w", ws.workspace, "-s", ws.sessions], io);
		// Ctrl+C as soon as the command listens for it: before any file is read.
		while (process.listenerCount("SIGINT") === before) await new Promise((r) => setImmediate(r));
		process.emit("SIGINT");
		expect(await run).toBe(130);
		expect(err.join("\n")).toContain("pbot-history: stopping after the file being read (Ctrl+C again quits at once)");
		expect(out.join("")).toContain("Stopped: 18 file(s) not read yet. What was read is archived and kept; `pbot-history ingest` again reads the rest");
		expect(process.listenerCount("SIGINT")).toBe(before);
		const again = capture(ws.workspace);
		expect(await runCli(["ingest", "-w", ws.workspace, "-s", ws.sessions, "--json"], again.io)).toBe(0);
		const report = JSON.parse(again.out.join(""));
		expect(report.totals.sessions).toBe(17);
		expect(report.stopped).toBeUndefined();
	});

	it("rebuild makes the search text again: bytes damaged inside a document's text, which no search sees, are repaired", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const search = async (query: string) => {
			const { io, out } = capture(ws.workspace);
			expect(await runCli(["search", query, "--sessions", "pi-sessions", "--json"], io)).toBe(0);
			return (JSON.parse(out.join("")) as { total: number }).total;
		};
		expect(await runCli(["ingest", "--sessions", "pi-sessions"], capture(ws.workspace).io)).toBe(0);
		const before = await search("a");
		// The largest session's folded text overwritten in place, its separators kept (so its layout holds).
		const dir = join(ws.workspace, ".pi", "pbot", "text");
		const names = (await readdir(dir)).filter((n) => n.endsWith(".text"));
		const sizes = await Promise.all(names.map(async (n) => (await readFile(join(dir, n))).length));
		const file = join(dir, names[sizes.indexOf(Math.max(...sizes))] as string);
		const bytes = await readFile(file);
		const header = JSON.parse(bytes.toString("utf8", 0, bytes.indexOf(10))) as Record<string, number>;
		const text = bytes.indexOf(10) + 1 + (header.docs as number) * 64 + (header.idBytes as number) + (header.metaBytes as number);
		for (let at = text; at < text + (header.textBytes as number); at++) if (bytes[at] !== 0xff) bytes[at] = 0x78;
		await writeFile(file, bytes);
		expect(await search("a")).toBeLessThan(before);
		const { io, out, err } = capture(ws.workspace);
		expect(await runCli(["rebuild", "--sessions", "pi-sessions"], io)).toBe(0);
		// What it removed on purpose is not reported as missing; its report says what it did.
		expect(`${out.join("")}${err.join("")}`).not.toContain("missing");
		expect(out.join("")).toMatch(/^Rebuilt: read 17 session\(s\) again into .*\(0 archive\(s\) changed\) and made the search text again\.$/m);
		expect(await search("a")).toBe(before);
	});

	it("exits 2 with a message for an unknown option", async () => {
		const { io, err } = capture(process.cwd());
		expect(await runCli(["ingest", "--bogus"], io)).toBe(2);
		expect(err.join("")).toContain("unknown option");
	});

	it("runs as the built bin: the demo ingests the bundled sessions, and removes its temporary workspace", async () => {
		const { stdout } = await exec(process.execPath, ["bin/pbot-history.cjs", "demo"], { cwd: process.cwd() });
		expect(stdout).toMatch(/Ingested 17 session\(s\)/);
		expect(stdout).toContain("72");
		const workspace = /^Demo workspace: (.+)$/m.exec(stdout)?.[1] as string;
		expect(stdout).toContain(`Removed the demo workspace ${workspace}.`);
		expect(existsSync(workspace)).toBe(false);
	});

	it("removes its temporary workspace when the reader of its output goes away (demo | head -1) and on Ctrl+C", async () => {
		for (const end of ["reader gone", "SIGINT"] as const) {
			const child = spawn(process.execPath, ["bin/pbot-history.cjs", "demo"], { cwd: process.cwd(), stdio: ["ignore", "pipe", "ignore"] });
			// The first line names the workspace; then the reader goes (or Ctrl+C comes) while the demo runs.
			const first = await new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8"))));
			const workspace = /^Demo workspace: (.+)$/m.exec(first)?.[1] as string;
			expect(workspace).toBeTruthy();
			if (end === "reader gone") child.stdout.destroy();
			else child.kill("SIGINT");
			const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
			expect([0, 130], end).toContain(code);
			expect(existsSync(workspace), end).toBe(false);
		}
	});

	it("prints its version (package.json's) with --version or -V, from the built bin and in process, and help lists the flag", async () => {
		const version = (JSON.parse(await readFile("package.json", "utf8")) as { version: string }).version;
		for (const flag of ["--version", "-V"]) {
			const { stdout } = await exec(process.execPath, ["bin/pbot-history.cjs", flag], { cwd: process.cwd() });
			expect(stdout).toBe(`${version}\n`);
			const { io, out } = capture(process.cwd());
			expect(await runCli([flag], io)).toBe(0);
			expect(out.join("")).toBe(version);
		}
		const { io, out } = capture(process.cwd());
		expect(await runCli(["--help"], io)).toBe(0);
		expect(out.join("")).toMatch(/-V, --version\s+print the version/);
	});

	it("says when an archive could not be written, and exits 1: nothing is reported written that is not", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		const first = capture(ws.workspace);
		expect(await runCli(["ingest", "--sessions", "pi-sessions", "--json"], first.io)).toBe(0);
		const sessions = (JSON.parse(first.out.join("")) as { sessions: { sessionId: string; qa: number }[] }).sessions;
		const victim = sessions.find((s) => s.qa > 0)?.sessionId as string;
		// Its archive's name taken by a folder (as a failed disk would fail the write); `rebuild` reads every file again.
		const archive = join(ws.workspace, ".pi", "pbot", "history", `${victim}.json`);
		await rm(archive);
		await mkdir(archive);
		const { io, out, err } = capture(ws.workspace);
		expect(await runCli(["rebuild", "--sessions", "pi-sessions"], io)).toBe(1);
		expect(out.join("")).toMatch(/archive\(s\) changed, 1 FAILED/);
		expect(out.join("")).toContain(`${victim}.json is a folder`);
		expect(err.join("")).toMatch(/1 archive write\(s\) failed/);
	});

	it("says on stderr that it waits for another pbot process reading the workspace's sessions, and who, then goes on", async () => {
		const ws = await fixtureWorkspace();
		cleanups.push(ws.cleanup);
		await mkdir(join(ws.workspace, ".pi", "pbot"), { recursive: true });
		// The lease of a live process of this host (this test's parent), as an ingest holds it.
		const lease = join(ws.workspace, ".pi", "pbot", "ingest.lock");
		await writeFile(
			lease,
			JSON.stringify({ pid: process.ppid, host: hostname(), at: "2026-12-06T05:01:02.000Z", token: "theirs", scope: folderScope(dirname(lease)) }),
		);
		const { io, out, err } = capture(ws.workspace);
		const run = runCli(["ingest", "--sessions", "pi-sessions"], io);
		await waitFor(() => err.length > 0, "the waiting line");
		expect(err).toEqual([
			`pbot-history: waiting for another pbot process (pid ${process.ppid}, since 05:01:02 UTC) that is reading this workspace's sessions; Ctrl+C stops`,
		]);
		expect(out).toEqual([]);
		await rm(lease);
		expect(await run).toBe(0);
		expect(out.join("")).toMatch(/Ingested 17 session\(s\)/);
		expect(existsSync(lease)).toBe(false);
	});
});
