/**
 * Ingest benchmarks in a process of their own: the naive baseline and a cold ingest into a fresh
 * workspace (the service as the CLI wires it). The CLI's own ingests, cold and warm, are whole
 * processes started by the runner (`bench/processes.ts`).
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { readArchives } from "../archives.ts";
import { folderBytes, peakRss, workspaceService } from "./wiring.ts";

export interface NaiveResult {
	readonly bytes: number;
	readonly lines: number;
	readonly ms: number;
}

/**
 * The naive baseline: read every file, decode it whole, split at newlines, `JSON.parse` every
 * line. What any reader of Pi's files does at the least; it keeps nothing.
 */
export function naiveRead(dir: string): NaiveResult {
	const { files, bytes } = folderBytes(dir);
	const started = performance.now();
	let lines = 0;
	for (const file of files) {
		const text = readFileSync(file, "utf8");
		let start = 0;
		for (;;) {
			const nl = text.indexOf("\n", start);
			const end = nl === -1 ? text.length : nl;
			if (end > start) {
				JSON.parse(text.slice(start, end));
				lines++;
			}
			if (nl === -1) break;
			start = nl + 1;
		}
	}
	return { bytes, lines, ms: performance.now() - started };
}

export interface ColdResult {
	readonly bytes: number;
	readonly files: number;
	readonly ms: number;
	readonly sessions: number;
	readonly qa: number;
	readonly warnings: number;
	readonly archiveBytes: number;
	readonly textBytes: number;
	readonly peakRss: number;
	readonly heapUsed: number;
}

/** An empty workspace (the runner also removes it before the process starts, then flushes the disk). */
function freshWorkspace(workspace: string): void {
	rmSync(workspace, { recursive: true, force: true });
	mkdirSync(workspace, { recursive: true });
}

/** `ingest` of every file into a workspace without archives (as `pbot-history ingest` does). */
export async function coldIngest(sessionsDir: string, workspace: string): Promise<ColdResult> {
	freshWorkspace(workspace);
	const { files, bytes } = folderBytes(sessionsDir);
	const { service } = workspaceService(workspace, sessionsDir);
	const started = performance.now();
	const report = await service.ingest();
	const ms = performance.now() - started;
	const rss = peakRss();
	// After the peak is taken: the archives' text, from their JSON as written.
	const text = readArchives(workspace, { keepTexts: false });
	return {
		bytes,
		files: files.length,
		ms,
		sessions: report.sessions.length,
		qa: text.qa,
		warnings: report.warnings.length,
		archiveBytes: text.archiveBytes,
		textBytes: text.textBytes,
		peakRss: rss,
		heapUsed: process.memoryUsage().heapUsed,
	};
}
