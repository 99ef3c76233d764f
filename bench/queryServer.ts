/**
 * The workspace's query server (`src/cli/queryServer/`) as the bench meets it: started the way
 * people start it (a first query), waited for until it has read the history, and ended with what
 * it did and held.
 */
import { readFileSync } from "node:fs";
import { socketOf } from "../src/cli/queryServer/address.ts";
import { askControl } from "../src/cli/queryServer/client.ts";
import { isAlive } from "../src/storage/history-files/fileLock.ts";
import type { ProcessRun } from "./processes.ts";

/** How long a server may take to read a history into memory before the bench goes on without it. */
const READY_WITHIN_MS = 120_000;

/**
 * Ends any server of `workspace` (an earlier run's), runs `first` (a query, which starts one), and
 * waits until the new server has read the history: `readyMs` from the end of `first`.
 */
export async function startQueryServer(workspace: string, first: () => ProcessRun): Promise<{ ready: boolean; readyMs: number; failed?: string }> {
	const socket = socketOf(workspace);
	if (socket === undefined) return { ready: false, readyMs: 0, failed: "the workspace's path is too long for a socket" };
	await endServer(socket);
	const run = first();
	if (run.code !== 0) return { ready: false, readyMs: 0, failed: `the first query failed (exit ${run.code})` };
	const started = performance.now();
	while (performance.now() - started < READY_WITHIN_MS) {
		const hello = await askControl(socket, "status");
		if (hello && !hello.warming) return { ready: true, readyMs: performance.now() - started };
		await new Promise((r) => setTimeout(r, 50));
	}
	return { ready: false, readyMs: performance.now() - started, failed: `not ready within ${READY_WITHIN_MS / 1000} s` };
}

/** Ends the server of `workspace`, saying what it answered and held, and its peak RSS (Linux: `/proc`). */
export async function stopQueryServer(workspace: string): Promise<{ answered: number; keptBytes: number; peakRss?: number } | undefined> {
	const socket = socketOf(workspace);
	const hello = socket === undefined ? undefined : await askControl(socket, "status");
	if (!hello || socket === undefined) return undefined;
	const peakRss = peakRssOf(hello.pid);
	await endServer(socket);
	return { answered: hello.answered, keptBytes: hello.keptBytes, ...(peakRss !== undefined ? { peakRss } : {}) };
}

/** Asks the server at `socket` to end, and waits until its process has. */
async function endServer(socket: string): Promise<void> {
	const hello = await askControl(socket, "status");
	if (!hello) return;
	await askControl(socket, "stop");
	for (let i = 0; i < 200 && isAlive(hello.pid); i++) await new Promise((r) => setTimeout(r, 25));
}

/** A process's peak RSS from `/proc/<pid>/status` (`VmHWM`), in bytes; `undefined` elsewhere. */
function peakRssOf(pid: number): number | undefined {
	try {
		const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
		return kb === undefined ? undefined : Number(kb) * 1024;
	} catch {
		return undefined;
	}
}
