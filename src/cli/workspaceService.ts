/**
 * Opening the history service of the workspace a command's options name. Loaded by the commands'
 * actions (`await import`), not by the CLI's start: it brings the service, its storage and session
 * discovery, which `--help` and a mistyped flag do not need.
 */
import { resolve } from "node:path";
import { piAgentDir } from "../integrations/pi/history/agentDir.ts";
import { nativeSessionDir, type DiscoveryOptions } from "../integrations/pi/history/discovery.ts";
import { openWorkspaceHistory } from "../integrations/pi/history/workspaceHistory.ts";
import type { HistoryService } from "../services/history/historyService.ts";
import { workspaceOf, type WorkspaceOptions } from "./workspaceOptions.ts";

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
