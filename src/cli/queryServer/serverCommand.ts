/**
 * `pbot-history server [status|stop]`: what a workspace's query server is and holds, or its end.
 * For a person who wonders what the process left running is, or wants it gone now.
 */
import { rmSync } from "node:fs";
import { IDLE_ENV, SERVER_ENV, serverWanted, socketOf } from "./address.ts";
import { askControl, control, HELLO_MS } from "./client.ts";
import type { ServerHello } from "./messages.ts";
import { UsageError } from "../usageError.ts";

/** What the command prints for `action` on `workspace`'s server (a folder that exists: `workspaceFolder`; another action: a `UsageError`, exit 2). */
export async function serverCommand(action: string, workspace: string, json: boolean, now = Date.now()): Promise<string> {
	if (action !== "status" && action !== "stop") throw new UsageError(`server: unknown action ${JSON.stringify(action)} (status or stop)`);
	const socket = socketOf(workspace);
	const { hello, asked } = socket === undefined ? { hello: undefined, asked: undefined } : await control(socket, "status");
	// A process holds the socket and says nothing (stopped, hung): `stop` removes its socket, and the next query starts another.
	const silent = asked?.kind === "failed" && asked.silent === true;
	let stopped = false;
	if (action === "stop" && socket !== undefined)
		stopped = hello !== undefined ? (await askControl(socket, "stop")) !== undefined : silent && removeSocket(socket);
	if (json)
		return JSON.stringify(
			{
				workspace,
				running: hello !== undefined && !stopped,
				...(silent ? { silent: true } : {}),
				...(hello ? { server: serverFacts(hello) } : {}),
				...(action === "stop" ? { stopped } : {}),
			},
			null,
			2,
		);
	if (socket === undefined) return `No query server for ${workspace}: its path is too long for a socket (each command opens the history itself).`;
	if (silent)
		return stopped
			? `Removed the socket of a query server of ${workspace} that did not answer (a stopped or hung process: it ends if it runs again); the next search, sessions or read starts another.`
			: `A process holds the query server's socket of ${workspace} but does not answer (stopped or hung?). Each query waits ${HELLO_MS / 1000} s for it, then answers by itself and starts another server; \`pbot-history server stop\` removes its socket now.`;
	if (hello === undefined) {
		if (!serverWanted()) return `No query server for ${workspace}: ${SERVER_ENV} turns them off.`;
		return `No query server for ${workspace}${action === "stop" ? " was running" : ""}. The next search, sessions or read starts one (${SERVER_ENV}=off: never).`;
	}
	if (action === "stop")
		return stopped
			? `Stopped the query server of ${workspace} (pid ${hello.pid}).`
			: `The query server of ${workspace} (pid ${hello.pid}) did not answer: it may be ending.`;
	const held = hello.warming ? "reading the history into memory" : `${megabytes(hello.keptBytes)} of memory holding search text`;
	return [
		`Query server of ${workspace}: running (pid ${hello.pid}), ${held}; ${hello.answered} ${hello.answered === 1 ? "command" : "commands"} answered.`,
		`Started ${ago(now - hello.since)}; ends after ${ago(hello.idleUntil - now, "")} without a query (${IDLE_ENV}=<seconds> sets how long), or with \`pbot-history server stop\`.`,
	].join("\n");
}

function serverFacts(hello: ServerHello) {
	return {
		pid: hello.pid,
		answered: hello.answered,
		since: new Date(hello.since).toISOString(),
		idleUntil: new Date(hello.idleUntil).toISOString(),
		keptBytes: hello.keptBytes,
		warming: hello.warming,
	};
}

function megabytes(bytes: number): string {
	return `${Math.round(bytes / 1e6)} MB`;
}

/** `ms` as a person says it: "40 s ago", "3 min ago" (`suffix` ""; "0 s" for a time past). */
function ago(ms: number, suffix = " ago"): string {
	const s = Math.max(0, Math.round(ms / 1000));
	if (s < 120) return `${s} s${suffix}`;
	const min = Math.round(s / 60);
	return min < 120 ? `${min} min${suffix}` : `${Math.round(min / 60)} h${suffix}`;
}

/** Removes a silent server's socket; whether it was removed. */
function removeSocket(socket: string): boolean {
	try {
		rmSync(socket);
		return true;
	} catch {
		return false;
	}
}
