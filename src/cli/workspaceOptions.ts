import { resolve } from "node:path";
import type { Command } from "commander";

/**
 * The options every command that opens a workspace's history takes. Only the flags live here (every
 * command's help needs them); opening the service is `workspaceService.ts`, loaded by the actions.
 */
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
