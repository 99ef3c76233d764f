/**
 * Opening the history service of the workspace a command's options name. Loaded by the commands'
 * actions (`await import`), not by the CLI's start: it brings the service, its storage and session
 * discovery, which `--help` and a mistyped flag do not need.
 */
import { accessSync, constants, type Dirent, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { piAgentDir } from "../integrations/pi/history/agentDir.ts";
import { nativeSessionDir, type DiscoveryOptions } from "../integrations/pi/history/discovery.ts";
import { openWorkspaceHistory } from "../integrations/pi/history/workspaceHistory.ts";
import type { HistoryService } from "../services/history/service/historyService.ts";
import { UsageError } from "./usageError.ts";
import { workspaceOf, type WorkspaceOptions } from "./workspaceOptions.ts";

/** The history service of the workspace the options name. */
export function openFromOptions(opts: WorkspaceOptions, cwd: string): HistoryService {
	return openWorkspaceHistory({
		workspace: workspaceFolder(opts, cwd),
		...(opts.sessions ? { sessionDirs: sessionFolders(opts.sessions, cwd) } : {}),
		...(opts.agentDir ? { agentDir: resolve(cwd, opts.agentDir) } : {}),
	});
}

/**
 * The session discovery the options describe, and the folders where new session files appear:
 * the named folders, or else Pi's own folder for the workspace (the same rule as `openFromOptions`).
 */
export function discoveryFromOptions(opts: WorkspaceOptions, cwd: string): { discovery: DiscoveryOptions; folders: string[] } {
	const workspace = workspaceFolder(opts, cwd);
	if (opts.sessions && opts.sessions.length > 0) {
		const folders = sessionFolders(opts.sessions, cwd);
		return { discovery: { workspace, sessionDirs: folders }, folders };
	}
	const agentDir = opts.agentDir ? resolve(cwd, opts.agentDir) : piAgentDir();
	return { discovery: { workspace, agentDir }, folders: [nativeSessionDir(workspace, agentDir)] };
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
		for (const entry of readdirSafe(path)) {
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

/** A folder's entries, sorted by name; none when it cannot be read. */
function readdirSafe(dir: string): Dirent[] {
	try {
		return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
	} catch {
		return [];
	}
}

/**
 * The workspace `--workspace` names (or the current folder), which must be a folder that exists: a
 * mistyped path is the caller's mistake (exit 2). Without this check a query or an ingest made the
 * whole path to `.pi/pbot` and archived the sessions there, wherever the typo pointed.
 */
function workspaceFolder(opts: WorkspaceOptions, cwd: string): string {
	const dir = workspaceOf(opts, cwd);
	const stat = statSync(dir, { throwIfNoEntry: false });
	if (!stat) throw new UsageError(`--workspace: ${opts.workspace} does not exist (make the folder first to keep a history there)`);
	if (!stat.isDirectory()) throw new UsageError(`--workspace: ${opts.workspace} is not a folder`);
	return dir;
}

/**
 * The folders `--sessions` names, each a readable folder: a missing path, a file or an unreadable
 * folder is the caller's mistake (exit 2), not "0 sessions".
 */
function sessionFolders(dirs: readonly string[], cwd: string): string[] {
	return dirs.map((d) => {
		const dir = resolve(cwd, d);
		const stat = statSync(dir, { throwIfNoEntry: false });
		if (!stat) throw new UsageError(`--sessions: ${d} does not exist`);
		if (!stat.isDirectory()) throw new UsageError(`--sessions: ${d} is not a folder`);
		try {
			accessSync(dir, constants.R_OK | constants.X_OK);
		} catch {
			throw new UsageError(`--sessions: ${d} cannot be read`);
		}
		return dir;
	});
}
