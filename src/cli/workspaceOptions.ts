import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "./usageError.ts";

/**
 * The options every command that opens a workspace's history takes, and the check of the folder
 * `--workspace` names. Only these live here (every command's help needs them); opening the service
 * is `workspaceService.ts`, loaded by the actions.
 */
export interface WorkspaceOptions {
	readonly workspace: string;
	readonly sessions?: string[];
	readonly agentDir?: string;
}

/** Adds `--workspace`, `--sessions` and `--agent-dir` to a command. */
export function addWorkspaceOptions(command: Command, cwd: string): Command {
	return (
		command
			.option("-w, --workspace <dir>", "the workspace (Pi's working directory)", cwd)
			// One folder per flag, repeated for more: a variadic `<dir...>` took the words after it too,
			// so `search -s DIR owner` lost its query to the folders.
			.option("-s, --sessions <dir>", "a session folder to read whole; repeat for more (default: Pi's session folder for the workspace)", collect)
			.option("--agent-dir <dir>", "Pi's agent directory (default: $PI_CODING_AGENT_DIR or ~/.pi/agent)")
	);
}

/** The workspace folder the options name, absolute. */
export function workspaceOf(opts: WorkspaceOptions, cwd: string): string {
	return resolve(cwd, opts.workspace);
}

/** `--sessions` given again adds a folder. */
function collect(value: string, previous: string[] | undefined): string[] {
	return [...(previous ?? []), value];
}

/**
 * The workspace `--workspace` names (or the current folder), which must be a folder that exists: a
 * mistyped path is the caller's mistake (exit 2). Without this check a query or an ingest made the
 * whole path to `.pi/pbot` and archived the sessions there, wherever the typo pointed.
 */
export function workspaceFolder(opts: WorkspaceOptions, cwd: string): string {
	const dir = workspaceOf(opts, cwd);
	const stat = statSync(dir, { throwIfNoEntry: false });
	if (!stat) throw new UsageError(`--workspace: ${opts.workspace} does not exist (make the folder first to keep a history there)`);
	if (!stat.isDirectory()) throw new UsageError(`--workspace: ${opts.workspace} is not a folder`);
	return dir;
}
