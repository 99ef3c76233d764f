import { resolve } from "node:path";
import { piAgentDir } from "../integrations/pi/history/agentDir.ts";
import { nativeSessionDir, type DiscoveryOptions } from "../integrations/pi/history/discovery.ts";
import type { Command } from "commander";
import { openWorkspaceHistory } from "../integrations/pi/history/workspaceHistory.ts";
import type { HistoryService } from "../services/history/historyService.ts";

/** The options every command that opens a workspace's history takes. */
export interface WorkspaceOptions {
	readonly workspace: string;
	readonly sessions?: string[];
	readonly agentDir?: string;
}

/** Adds `--workspace`, `--sessions` and `--agent-dir` to a command. */
export function addWorkspaceOptions(command: Command, cwd: string): Command {
	return command
		.option("-w, --workspace <dir>", "the workspace (Pi's working directory)", cwd)
		.option("-s, --sessions <dir...>", "session folders to read whole (default: Pi's session folder for the workspace)")
		.option("--agent-dir <dir>", "Pi's agent directory (default: $PI_CODING_AGENT_DIR or ~/.pi/agent)");
}

/** The workspace folder the options name, absolute. */
export function workspaceOf(opts: WorkspaceOptions, cwd: string): string {
	return resolve(cwd, opts.workspace);
}

/** The history service of the workspace the options name. */
export function openFromOptions(opts: WorkspaceOptions, cwd: string): HistoryService {
	return openWorkspaceHistory({
		workspace: workspaceOf(opts, cwd),
		...(opts.sessions ? { sessionDirs: opts.sessions.map((d) => resolve(cwd, d)) } : {}),
		...(opts.agentDir ? { agentDir: resolve(cwd, opts.agentDir) } : {}),
	});
}

/**
 * The session discovery the options describe, and the folders where new session files appear:
 * the named folders, or else Pi's own folder for the workspace (the same rule as `openFromOptions`).
 */
export function discoveryFromOptions(opts: WorkspaceOptions, cwd: string): { discovery: DiscoveryOptions; folders: string[] } {
	const workspace = workspaceOf(opts, cwd);
	if (opts.sessions && opts.sessions.length > 0) {
		const folders = opts.sessions.map((d) => resolve(cwd, d));
		return { discovery: { workspace, sessionDirs: folders }, folders };
	}
	const agentDir = opts.agentDir ? resolve(cwd, opts.agentDir) : piAgentDir();
	return { discovery: { workspace, agentDir }, folders: [nativeSessionDir(workspace, agentDir)] };
}
