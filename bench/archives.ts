/**
 * What the bench needs to know of a workspace's archives, read from their JSON directly (the
 * documented format, `docs/archive-format.md`), untimed: the Q&A texts the query mix is cut from,
 * the archived text's bytes (what the projection rate is measured against), ids to `read`.
 * Nothing here imports `src`: the benchmarks measure the CLI and Pi from outside.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** pbot's folder in a workspace. */
export const PBOT_DIR = join(".pi", "pbot");
/** The archives: `<workspace>/.pi/pbot/history/<sessionId>.json`. */
export const ARCHIVE_DIR = join(PBOT_DIR, "history");
/**
 * The persisted text projection beside the archives (what search scans): one place to change when
 * the folder is renamed.
 */
export const PROJECTION_DIR = join(PBOT_DIR, "text");

export const archiveDir = (workspace: string) => join(workspace, ARCHIVE_DIR);
export const projectionDir = (workspace: string) => join(workspace, PROJECTION_DIR);

interface ArchivePart {
	readonly text?: unknown;
}
interface ArchiveJson {
	readonly format?: unknown;
	readonly session?: { readonly sessionId?: unknown };
	readonly nodes?: Record<string, { readonly id?: unknown; readonly parts?: readonly ArchivePart[] }>;
	readonly summaries?: Record<string, { readonly id?: unknown; readonly text?: unknown }>;
}

export interface ArchiveCorpus {
	/** Archive files read (of `files` in the folder). */
	readonly read: number;
	readonly files: number;
	/** Bytes of the archive files read. */
	readonly archiveBytes: number;
	/** Q&A of the archives read. */
	readonly qa: number;
	/** UTF-8 bytes of the searchable text: every Q&A part and every summary text. */
	readonly textBytes: number;
	/** One text per Q&A (its parts joined), for cutting phrases. */
	readonly texts: readonly string[];
	readonly sessionIds: readonly string[];
	/** A few Q&A and summary ids per archive (for `read`). */
	readonly nodeIds: readonly string[];
}

/** The archive files of a workspace, sorted (none when the folder is missing). */
export function archiveFiles(workspace: string): string[] {
	const dir = archiveDir(workspace);
	if (!existsSync(dir)) return [];
	return readdirSync(dir)
		.filter((n) => n.endsWith(".json") && !n.startsWith("."))
		.sort()
		.map((n) => join(dir, n));
}

/**
 * Reads the archives of a workspace; with `maxFiles`, only that many, spread evenly over the
 * sorted list (a million nodes of archives do not need to be parsed to draw queries from them).
 */
export function readArchives(workspace: string, options: { maxFiles?: number; keepTexts?: boolean } = {}): ArchiveCorpus {
	const all = archiveFiles(workspace);
	const max = options.maxFiles ?? all.length;
	const step = all.length > max ? all.length / max : 1;
	const chosen: string[] = [];
	for (let i = 0; i < all.length && chosen.length < max; i += step) chosen.push(all[Math.floor(i)] as string);
	const texts: string[] = [];
	const sessionIds: string[] = [];
	const nodeIds: string[] = [];
	let archiveBytes = 0;
	let textBytes = 0;
	let qa = 0;
	for (const file of chosen) {
		const raw = readFileSync(file);
		archiveBytes += raw.length;
		let json: ArchiveJson;
		try {
			json = JSON.parse(raw.toString("utf8")) as ArchiveJson;
		} catch {
			continue;
		}
		if (json.format !== "pbot-history-archive") continue;
		if (typeof json.session?.sessionId === "string") sessionIds.push(json.session.sessionId);
		let picked = 0;
		for (const node of Object.values(json.nodes ?? {})) {
			qa++;
			const parts = (node.parts ?? []).map((p) => (typeof p.text === "string" ? p.text : ""));
			for (const p of parts) textBytes += Buffer.byteLength(p);
			if (options.keepTexts !== false) texts.push(parts.join("\n\n"));
			if (picked++ < 2 && typeof node.id === "string") nodeIds.push(node.id);
		}
		for (const s of Object.values(json.summaries ?? {})) {
			if (typeof s.text === "string") {
				textBytes += Buffer.byteLength(s.text);
				if (typeof s.id === "string" && picked++ < 3) nodeIds.push(s.id);
			}
		}
	}
	return { read: chosen.length, files: all.length, archiveBytes, qa, textBytes, texts, sessionIds, nodeIds };
}

/** Total bytes of the files under a folder (0 when it is missing). */
export function folderSize(dir: string): number {
	if (!existsSync(dir)) return 0;
	let total = 0;
	for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
		if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
	}
	return total;
}
