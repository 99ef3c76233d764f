/**
 * Starting a workspace's query server (`server.ts`): a process of its own, detached from the
 * command that starts it (which answers and exits as before), with no terminal and no output.
 */
import { load } from "./client.ts";

/** The bin's first argument for a server: not a command a person types (`pbot-history --help` does not list it). */
export const SERVE_ARGUMENT = "__query-server";

/** What a server is started with: the command that started it, and that command's workspace. */
export interface FirstCommand {
	readonly argv: readonly string[];
	readonly cwd: string;
	readonly workspace: string;
}

/** Starts a server for `first.workspace` through the bin at `bin`; returns at once. */
export function startServer(bin: string, first: FirstCommand): void {
	const { spawn } = load("node:child_process") as typeof import("node:child_process");
	try {
		// In the workspace's folder: a server's current folder is not one a person may want to remove.
		const child = spawn(process.execPath, [bin, SERVE_ARGUMENT, JSON.stringify(first)], { cwd: first.workspace, detached: true, stdio: "ignore" });
		child.on("error", () => {});
		child.unref();
	} catch {
		// (No server: the next command answers by itself, and tries again.)
	}
}
