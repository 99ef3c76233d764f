/**
 * What a person reads under an empty answer (or an ingest that found nothing) when the workspace
 * has no session at all: which workspace, and where its sessions were looked for. A first run in
 * the wrong folder otherwise only said "No sessions found." Text output only: `--json` is the
 * service's answer alone.
 */
import { type Dirent, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { piAgentDir } from "../integrations/pi/history/agentDir.ts";
import { nativeSessionDir } from "../integrations/pi/history/discovery.ts";
import { listArchiveIds } from "../storage/history-files/index.ts";
import { formatEmptyHistory } from "./queryFormat.ts";
import { workspaceOf, type WorkspaceOptions } from "./workspaceOptions.ts";
import { discoveryFromOptions } from "./workspaceService.ts";

/**
 * The note (with the blank line before it), or `""` when the history has any session (the filters or
 * the words found nothing). A session is listed when it has an archive, and the answer's query has
 * just brought the archives up to date: the archives' folder is listed, not asked again (a second
 * query had cost a search with no hit ≈ 26 ms more as a process on the 1 GB history).
 */
export async function emptyHistoryNote(opts: WorkspaceOptions, cwd: string): Promise<string> {
	if ((await listArchiveIds(workspaceOf(opts, cwd))).length > 0) return "";
	return `\n\n${formatEmptyHistory(sessionFoldersOf(opts, cwd), (opts.sessions?.length ?? 0) > 0)}`;
}

/** A folder sessions were looked for in: whether it is there, and the folders in it that hold session files. */
export interface LookedIn {
	readonly path: string;
	readonly exists: boolean;
	/** Session files (`.jsonl`) directly inside. */
	readonly files: number;
	/** Folders directly inside that hold `.jsonl` files (Pi keeps each workspace's in one), the first few. */
	readonly inside: readonly string[];
	/** How many such folders there are in all. */
	readonly insideCount: number;
}

/**
 * The folders whose session files make the workspace's history (`discoveryFromOptions`), each with
 * whether it is there and which folders in it hold session files: what an empty answer explains.
 * Only asked when the history has no session, so listing a folder of folders costs nobody's query.
 */
export function sessionFoldersOf(opts: WorkspaceOptions, cwd: string): { workspace: string; folders: LookedIn[]; above?: string } {
	const { discovery, folders } = discoveryFromOptions(opts, cwd);
	const workspace = discovery.workspace;
	if (opts.sessions && opts.sessions.length > 0) return { workspace, folders: folders.map(lookedIn) };
	// Pi's folder is per exact working directory: run in a project's subfolder, pbot finds none. The
	// nearest folder above with sessions of its own is most likely where Pi ran.
	const agentDir = opts.agentDir ? resolve(cwd, opts.agentDir) : piAgentDir();
	let above: string | undefined;
	for (let dir = dirname(workspace); !above && dir !== dirname(dir); dir = dirname(dir)) if (holdsSessions(nativeSessionDir(dir, agentDir))) above = dir;
	return { workspace, folders: folders.map(lookedIn), ...(above ? { above } : {}) };
}

function lookedIn(path: string): LookedIn {
	const exists = statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
	const inside: string[] = [];
	let insideCount = 0;
	let files = 0;
	if (exists) {
		// By name: the folders named are the first few in order.
		for (const entry of readdirSafe(path).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
			if (entry.isFile() && entry.name.endsWith(".jsonl")) files++;
			if (!entry.isDirectory()) continue;
			const sub = join(path, entry.name);
			if (!holdsSessions(sub)) continue;
			insideCount++;
			if (inside.length < 3) inside.push(sub);
		}
	}
	return { path, exists, files, inside, insideCount };
}

/** Whether `dir` holds session files (`.jsonl`) directly. */
function holdsSessions(dir: string): boolean {
	return readdirSafe(dir).some((e) => e.isFile() && e.name.endsWith(".jsonl"));
}

/** A folder's entries; none when it cannot be read. */
function readdirSafe(dir: string): Dirent[] {
	try {
		return readdirSync(dir, { withFileTypes: true });
	} catch {
		return [];
	}
}
