/**
 * Where a workspace's query server listens, and whether one is wanted. The server is a process
 * the first query command of a workspace leaves behind (`server.ts`): it keeps that workspace's
 * history open, its search text in memory, and answers the next query commands, which then pay
 * Node's start and a connection instead of opening the history again.
 */
import { lstatSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** The query commands a server answers: they read the history and write nothing a person asked for. */
export const SERVED_COMMANDS: ReadonlySet<string> = new Set(["search", "sessions", "read"]);

/** Set to `off` (or `0`, `no`, `false`): no command asks a server, and none is started. */
export const SERVER_ENV = "PBOT_HISTORY_SERVER";
/** Seconds a server waits for the next command before it ends (default `DEFAULT_IDLE_SECONDS`). */
export const IDLE_ENV = "PBOT_HISTORY_SERVER_IDLE";
export const DEFAULT_IDLE_SECONDS = 600;

/** The socket's name in the workspace's `.pi/pbot/`. */
export const SOCKET_NAME = "query-server.sock";

/**
 * The longest socket path in bytes: the system's limit is 108 with the closing zero on Linux, 104
 * on macOS; a starting server's own socket is longer by its pid (`query-server.<pid>.sock`, up to
 * ten digits and a dot). A workspace deeper than that gets no server (each command opens the
 * history itself).
 */
const MAX_SOCKET_PATH = 103 - 11;

/**
 * Whether the socket at `path` is this user's (a server another user started, as root may find one,
 * would answer with that user's rights): `undefined` when there is none.
 */
export function socketOwnedByUs(path: string): boolean | undefined {
	const stat = lstatSync(path, { throwIfNoEntry: false });
	if (!stat) return undefined;
	return stat.isSocket() && (process.getuid === undefined || stat.uid === process.getuid());
}

/** Whether the environment lets commands use and start servers (not on Windows: no Unix sockets there). */
export function serverWanted(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
	if (platform === "win32") return false;
	const set = env[SERVER_ENV]?.trim().toLowerCase();
	return !(set === "off" || set === "0" || set === "no" || set === "false");
}

/** How long a server waits for the next command, in ms (`PBOT_HISTORY_SERVER_IDLE`, seconds; a bad value: the default). */
export function idleMsOf(env: NodeJS.ProcessEnv = process.env): number {
	const set = Number(env[IDLE_ENV]);
	const seconds = env[IDLE_ENV] !== undefined && Number.isFinite(set) && set > 0 ? set : DEFAULT_IDLE_SECONDS;
	// (At most what a timer can wait, ≈ 24.8 days: a longer one fires at once, and "never end" ended the server.)
	return Math.min(seconds * 1000, MAX_TIMER_MS);
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** The socket of the workspace's server, or `undefined` when its path is too long for one. */
export function socketOf(workspace: string): string | undefined {
	const path = join(workspace, ".pi", "pbot", SOCKET_NAME);
	return Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : undefined;
}

/**
 * The workspace a query command names (`-w`/`--workspace`, else the current folder), read from
 * its arguments without the CLI's parser, which a server's client does not load. Where this reads
 * them otherwise than the parser does (an option's value that looks like the option), the server
 * finds another workspace than its own and declines: the command then runs in the client's
 * process, with the same answer.
 */
export function workspaceArgument(argv: readonly string[], cwd: string): string {
	let named: string | undefined;
	for (let i = 1; i < argv.length; i++) {
		const arg = argv[i] as string;
		if (arg === "--") break;
		if (arg === "-w" || arg === "--workspace") named = argv[++i];
		else if (arg.startsWith("--workspace=")) named = arg.slice("--workspace=".length);
		else if (arg.startsWith("-w") && !arg.startsWith("--")) named = arg.slice(2);
	}
	return resolve(cwd, named ?? ".");
}

/**
 * The build of the CLI's script (its size and time): a server started from another build (the
 * package was updated or built again since) must not answer for this one.
 */
export function cliBuild(script: string): string {
	try {
		const stat = statSync(script);
		return `${stat.size}:${stat.mtimeMs}`;
	} catch {
		return "none";
	}
}
