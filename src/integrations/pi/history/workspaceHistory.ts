import { resolve } from "node:path";
import { piAgentDir } from "./agentDir.ts";
import { HistoryService, type ProgressListener } from "../../../services/history/service/historyService.ts";
import type { LeaseHolder, SessionDiscovery } from "../../../services/history/service/ports.ts";
import { workspaceCheckpointStore } from "../../../storage/history-files/checkpoints.ts";
import { workspaceArchiveStore, workspaceIngestLease, workspaceSummaryClaims, workspaceTextStore } from "../../../storage/history-files/index.ts";
import { fileDiscovery, type DiscoveryOptions } from "./discovery.ts";
import type { FolderWatch } from "./folderWatch.ts";
import { migrateWorkspaceArchives, migratingArchiveStore, type MigrationReport } from "./workspaceMigration.ts";

export interface WorkspaceHistoryOptions {
	/** The workspace's folder (it must exist; its history is kept in `.pi/pbot/` inside it). */
	readonly workspace: string;
	/**
	 * Folders named by the person: all their session files are taken. A relative path is taken from
	 * the workspace's folder (the CLI's `--sessions`, from the current folder). One that is not
	 * there, or no folder, is said in the warnings.
	 */
	readonly sessionDirs?: readonly string[];
	/** Folders scanned for sessions of this workspace (by header `cwd` and fork parents; relative: from the workspace). */
	readonly scanDirs?: readonly string[];
	readonly files?: readonly string[];
	/** Pi's agent directory; defaults to Pi's own (`PI_CODING_AGENT_DIR` or `~/.pi/agent`). */
	readonly agentDir?: string;
	/** Scan Pi's native default session folder of the workspace (default: when no folder is named). */
	readonly scanNativeDir?: boolean;
	/** Copy this workspace's records from the old location (`<agentDir>/pbot/history/`) on load. Default true. */
	readonly migrate?: boolean;
	/** What the migration did (or why it failed), once, when the service loads. */
	readonly onMigration?: (report: MigrationReport | undefined, error?: Error) => void;
	/** Told how far long work is (session files read, projection files made again). */
	readonly progress?: ProgressListener;
	/** Told who holds the workspace's ingest lease while an ingest waits for another process, `undefined` once it is over. */
	readonly onWait?: (holder: LeaseHolder | undefined) => void;
	/** Sessions the text pack may leave to their own files before an ingest or a warm-up packs again (default 64; tests: fewer). */
	readonly packAfter?: number;
	/** Bytes of search text kept in memory between searches (a process that answers many); default none. */
	readonly keepText?: number;
	/**
	 * Watches the session folders (`FolderWatch`), so that a query's refresh in a process that
	 * answers many looks only at the files reported changed, not at every file's `stat`.
	 */
	readonly watch?: FolderWatch;
}

/** The history service of a workspace, wired to its archive folder and its Pi session files. */
export function openWorkspaceHistory(options: WorkspaceHistoryOptions): HistoryService {
	// An empty path would be the current folder: a history made wherever the caller happens to run.
	if (typeof options.workspace !== "string" || options.workspace.trim() === "")
		throw new TypeError(`openWorkspaceHistory: workspace must name the workspace's folder, not ${JSON.stringify(options.workspace)}`);
	const workspace = resolve(options.workspace);
	const agentDir = options.agentDir ?? piAgentDir();
	const scanNative = options.scanNativeDir ?? (options.sessionDirs ?? []).length === 0;
	const discoveryOptions: DiscoveryOptions = {
		workspace,
		...(options.sessionDirs ? { sessionDirs: options.sessionDirs } : {}),
		...(options.scanDirs ? { scanDirs: options.scanDirs } : {}),
		...(options.files ? { files: options.files } : {}),
		...(scanNative ? { agentDir } : {}),
		...(options.watch ? { watch: options.watch } : {}),
	};
	return createWorkspaceHistory({
		workspace,
		agentDir,
		discovery: fileDiscovery(discoveryOptions),
		sessionDirs: [...(options.sessionDirs ?? []), ...(options.scanDirs ?? [])],
		...(options.migrate !== undefined ? { migrate: options.migrate } : {}),
		...(options.onMigration ? { onMigration: options.onMigration } : {}),
		...(options.progress ? { progress: options.progress } : {}),
		...(options.onWait ? { onWait: options.onWait } : {}),
		...(options.packAfter !== undefined ? { packAfter: options.packAfter } : {}),
		...(options.keepText !== undefined ? { keepText: options.keepText } : {}),
	});
}

export interface CreateWorkspaceHistoryOptions {
	/** Absolute. */
	readonly workspace: string;
	readonly agentDir: string;
	readonly discovery: SessionDiscovery;
	/** Session folders of the workspace beyond Pi's native one (for migration's "belongs here"). */
	readonly sessionDirs?: readonly string[];
	readonly migrate?: boolean;
	readonly onMigration?: (report: MigrationReport | undefined, error?: Error) => void;
	/** Told how far long work is (files read, projection files made again): Pi's footer shows it. */
	readonly progress?: ProgressListener;
	/** Told who holds the workspace's ingest lease while an ingest waits for another process, `undefined` once it is over. */
	readonly onWait?: (holder: LeaseHolder | undefined) => void;
	readonly packAfter?: number;
	/** Bytes of search text kept in memory between searches (a process that answers many); default none. */
	readonly keepText?: number;
}

/**
 * The history service of a workspace with a given discovery: its archive folder (writes merge with
 * what other processes stored), per-file checkpoints, and migration from the old location on load.
 * The CLI (fixed folders) and Pi (folders that change with the current session) both build it here.
 */
export function createWorkspaceHistory(options: CreateWorkspaceHistoryOptions): HistoryService {
	const { workspace, agentDir, discovery } = options;
	let store = workspaceArchiveStore(workspace);
	if (options.migrate ?? true) {
		const sessionDirs = options.sessionDirs ?? [];
		store = migratingArchiveStore(store, () => migrateWorkspaceArchives({ workspace, agentDir, discovery, sessionDirs }), options.onMigration);
	}
	return new HistoryService({
		store,
		discovery,
		checkpoints: workspaceCheckpointStore(workspace),
		text: workspaceTextStore(workspace),
		lease: workspaceIngestLease(workspace),
		summaryClaims: workspaceSummaryClaims(workspace),
		...(options.progress ? { progress: options.progress } : {}),
		...(options.onWait ? { onWait: options.onWait } : {}),
		...(options.packAfter !== undefined ? { packAfter: options.packAfter } : {}),
		...(options.keepText !== undefined ? { keepText: options.keepText } : {}),
	});
}
