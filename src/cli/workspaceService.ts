/**
 * Opening the history service of the workspace a command's options name. Loaded by the commands'
 * actions (`await import`), not by the CLI's start: it brings the service, its storage and session
 * discovery, which `--help` and a mistyped flag do not need.
 */
import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { piAgentDir } from "../integrations/pi/history/agentDir.ts";
import { nativeSessionDir, type DiscoveryOptions } from "../integrations/pi/history/discovery.ts";
import type { FolderWatch } from "../integrations/pi/history/folderWatch.ts";
import { ProgressStatus, waitingText } from "../integrations/pi/history/progressStatus.ts";
import { openWorkspaceHistory } from "../integrations/pi/history/workspaceHistory.ts";
import type { HistoryService } from "../services/history/service/historyService.ts";
import { UsageError } from "./usageError.ts";
import { workspaceFolder, type WorkspaceOptions } from "./workspaceOptions.ts";

/**
 * The history service of the workspace the options name. `say`: where a person reads that an
 * ingest waits for another pbot process (stderr), once per wait; `status`: a line of progress on a
 * terminal (`CliIo.status`), cleared when the work is done.
 */
export function openFromOptions(
	opts: WorkspaceOptions,
	cwd: string,
	say?: (text: string) => void,
	status?: ((text: string | undefined) => void) | undefined,
	/** A process that answers many commands (the query server): its search text kept, its session folders watched. */
	resident?: { readonly keepText: number; readonly watch: FolderWatch },
): HistoryService {
	// A long first read (a new workspace of hundreds of sessions: seconds) is shown as it goes, on a
	// terminal (`status`): it had been seconds of silence before the first answer.
	const progress = status ? new ProgressStatus() : undefined;
	progress?.showIn(status);
	return openWorkspaceHistory({
		...(say ? { onWait: (holder) => holder && say(`pbot-history: ${waitingText(holder)}; Ctrl+C stops`) } : {}),
		...(progress ? { progress: (work: "sessions" | "search text", done: number, total: number) => progress.show(work, done, total) } : {}),
		...checkedOptions(opts, cwd),
		...(resident ? { keepText: resident.keepText, watch: resident.watch } : {}),
	});
}

/** How a command opens its workspace's history: `openFromOptions`, or a query server's services kept open. */
export type OpenService = typeof openFromOptions;

/**
 * The folders the options name, checked (exit 2 for a missing or odd one) and absolute: what
 * `openFromOptions` opens the history with.
 */
export function checkedOptions(opts: WorkspaceOptions, cwd: string): { workspace: string; sessionDirs?: string[]; agentDir?: string } {
	return {
		workspace: workspaceFolder(opts, cwd),
		...(opts.sessions ? { sessionDirs: sessionFolders(opts.sessions, cwd) } : {}),
		...(opts.agentDir ? { agentDir: resolve(cwd, opts.agentDir) } : {}),
	};
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

/**
 * The folders `--sessions` names, each a readable folder: a missing path, a file or an unreadable
 * folder is the caller's mistake (exit 2), not "0 sessions".
 */
function sessionFolders(dirs: readonly string[], cwd: string): string[] {
	return dirs.map((d) => {
		const dir = resolve(cwd, d);
		const stat = statSync(dir, { throwIfNoEntry: false });
		if (!stat) throw new UsageError(`--sessions: ${d} does not exist`);
		if (!stat.isDirectory())
			throw new UsageError(`--sessions: ${d} is not a folder${d.endsWith(".jsonl") ? ` (name the folder that holds it: ${dirname(d) || "."})` : ""}`);
		try {
			accessSync(dir, constants.R_OK | constants.X_OK);
		} catch {
			throw new UsageError(`--sessions: ${d} cannot be read`);
		}
		return dir;
	});
}
