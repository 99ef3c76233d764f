/**
 * Ingest benchmarks: the naive baseline, a cold ingest into a fresh workspace, and a warm start
 * of a new process on a workspace whose archives and checkpoints are present.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readNode, searchHistory } from "../../src/services/history/query/index.ts";
import { ngramSearchIndex } from "../../src/services/history/query/ngramSearchIndex.ts";
import { createRng } from "../generator/prng.ts";
import { archiveBytes, archivedTextBytes, folderBytes, peakRss, workspaceService } from "./wiring.ts";

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
	await service.load(); // after the peak is taken: the ingest itself keeps no archive once written
	const text = archivedTextBytes(service.archiveState().sessions);
	return {
		bytes,
		files: files.length,
		ms,
		sessions: report.sessions.length,
		qa: text.qa,
		warnings: report.warnings.length,
		archiveBytes: archiveBytes(workspace),
		textBytes: text.bytes,
		peakRss: rss,
		heapUsed: process.memoryUsage().heapUsed,
	};
}

export interface WarmResult {
	/**
	 * New service to an ingest that finds nothing to do: every file checked against its checkpoint,
	 * no file and no archive read (the warm start of Pi's session_start or `pbot-history ingest`).
	 */
	readonly ms: number;
	/** Then, for the first query: every archive read into memory. */
	readonly loadMs: number;
	readonly filesRead: number;
	readonly sessions: number;
	/** The first search after the start: builds the search index. */
	readonly firstSearchMs: number;
	/** A refresh with nothing changed, in the same process (what every query pays first). */
	readonly queryRefreshMs: number;
	readonly readMs: readonly number[];
	readonly serviceReadMs: readonly number[];
	readonly peakRss: number;
}

/** A new process on a workspace whose archives and checkpoints are present and files unchanged. */
export async function warmStart(sessionsDir: string, workspace: string, reads: number): Promise<WarmResult> {
	const { service, filesRead } = workspaceService(workspace, sessionsDir);
	const t0 = performance.now();
	await service.refresh();
	const t1 = performance.now();
	await service.load();
	const t2 = performance.now();
	const index = ngramSearchIndex();
	const view = service.getView();
	searchHistory(view, { query: "config" }, index);
	const t3 = performance.now();
	await service.refresh();
	const t4 = performance.now();

	// Reads: Q&A, summaries and session roots, drawn with a fixed seed.
	const ids = [...view.nodes.keys()];
	const rng = createRng("reads");
	const readMs: number[] = [];
	for (let i = 0; i < reads && ids.length > 0; i++) {
		const id = ids[rng.int(ids.length)] as string;
		const s = performance.now();
		readNode(view, { id });
		readMs.push(performance.now() - s);
	}
	const serviceReadMs: number[] = [];
	for (let i = 0; i < Math.min(reads, 30) && ids.length > 0; i++) {
		const id = ids[rng.int(ids.length)] as string;
		const s = performance.now();
		await service.read({ id });
		serviceReadMs.push(performance.now() - s);
	}
	return {
		ms: t1 - t0,
		loadMs: t2 - t1,
		filesRead: filesRead(),
		sessions: Object.keys(service.archiveState().sessions).length,
		firstSearchMs: t3 - t2,
		queryRefreshMs: t4 - t3,
		readMs,
		serviceReadMs,
		peakRss: peakRss(),
	};
}

export function workspaceOf(dataDir: string, name: string): string {
	return join(dataDir, "work", name);
}

export interface CliResult {
	readonly ms: number;
	readonly exitCode: number;
	readonly peakRss: number;
}

/**
 * `pbot-history ingest` as a person runs it, in a new workspace: the CLI's own module graph
 * (loaded here, not by the other tasks) and its ingest, for its peak RSS.
 */
export async function cliIngest(sessionsDir: string, workspace: string): Promise<CliResult> {
	freshWorkspace(workspace);
	const { runCli } = await import("../../src/cli/main.ts");
	const started = performance.now();
	const exitCode = await runCli(["ingest", "--workspace", workspace, "--sessions", sessionsDir, "--json"], { stdout: () => undefined, stderr: () => undefined, cwd: workspace });
	return { ms: performance.now() - started, exitCode, peakRss: peakRss() };
}
