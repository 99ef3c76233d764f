/**
 * The CLI's standard output (`src/cli/stdout.ts`): written straight to fd 1 unless it is a terminal,
 * every byte in order even when a pipe is full and non-blocking, and a reader that goes away ends
 * the process quietly. Each case in a process of its own, whose fd 1 is what the case needs.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR as SAMPLE } from "../helpers/fixtures.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const cleanups = foldersRemovedAfter("all");

interface Ran {
	readonly code: number | null;
	readonly stdout: Buffer;
	readonly stderr: string;
}

/**
 * Runs `node args`, its stdout a pipe read only after `pauseMs` (`undefined`: closed at once,
 * unread; `"stderr"`: once the child writes to stderr, which it does after its last write, so the
 * pipe stays unread however long the child takes to start — a fixed pause let a slow start under a
 * loaded test run find the reader already reading, and the pipe never full).
 */
function run(args: readonly string[], pauseMs: number | "stderr" | undefined): Promise<Ran> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [...args], { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
		const out: Buffer[] = [];
		let err = "";
		child.stderr.on("data", (d: Buffer) => {
			err += d.toString();
			if (pauseMs === "stderr") child.stdout.resume();
		});
		if (pauseMs === undefined) child.stdout.destroy();
		else {
			child.stdout.pause();
			child.stdout.on("data", (d: Buffer) => out.push(d));
			if (pauseMs !== "stderr") setTimeout(() => child.stdout.resume(), pauseMs);
		}
		child.on("error", reject);
		child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out), stderr: err }));
	});
}

describe("standard output", () => {
	it("keeps every byte in order when a non-blocking pipe fills up: the rest goes through the stream", async () => {
		// `process.stdout` made first: Node then sets the pipe non-blocking, and the reader waits until
		// the writes are done (the child's verdict on stderr), so writes to fd 1 find it full.
		const script = `
			import { writeStdout, wroteThroughStream } from "./src/cli/stdout.ts";
			void process.stdout;
			for (let i = 0; i < 400; i++) writeStdout(String(i).padStart(6, "0") + " é的".repeat(2000) + "\\n");
			process.stderr.write(wroteThroughStream() ? "stream" : "fd");
		`;
		const ran = await run(["--import", "tsx", "--input-type=module", "-e", script], "stderr");
		expect(ran.code).toBe(0);
		expect(ran.stderr).toBe("stream");
		const lines = ran.stdout.toString("utf8").split("\n");
		expect(lines.length).toBe(401);
		expect(lines.slice(0, 400)).toEqual(Array.from({ length: 400 }, (_, i) => `${String(i).padStart(6, "0")}${" é的".repeat(2000)}`));
	});

	it("writes a pipe's output straight to fd 1 while it takes it", async () => {
		const script = `
			import { writeStdout, wroteThroughStream } from "./src/cli/stdout.ts";
			writeStdout("one\\n");
			writeStdout("two\\n");
			process.stderr.write(wroteThroughStream() ? "stream" : "fd");
		`;
		const ran = await run(["--import", "tsx", "--input-type=module", "-e", script], 0);
		expect(ran).toEqual({ code: 0, stdout: Buffer.from("one\ntwo\n"), stderr: "fd" });
	});

	it("ends a query quietly, with exit code 0, when the reader has gone away (`pbot-history search … | head`)", async () => {
		const workspace = await mkdtemp(join(tmpdir(), "pbot-stdout-"));
		cleanups.push(workspace);
		const where = ["-w", workspace, "-s", SAMPLE, "--agent-dir", join(workspace, "agent")];
		const ran = await run(["bin/pbot-history.cjs", "search", "the", "--json", ...where], undefined);
		expect(ran.stderr).toBe("");
		expect(ran.code).toBe(0);
	});

	it("says in one line that it cannot write its output to a full device, and exits 1", async () => {
		if (!existsSync("/dev/full")) return; // (Linux's device that is always full)
		const out = openSync("/dev/full", "w");
		try {
			const ran = spawnSync(process.execPath, ["bin/pbot-history.cjs", "--help"], { stdio: ["ignore", out, "pipe"], encoding: "utf8" });
			expect(ran.status).toBe(1);
			expect(ran.stderr).toBe("pbot-history: cannot write to standard output: ENOSPC: no space left on device, write\n");
		} finally {
			closeSync(out);
		}
	});
});
