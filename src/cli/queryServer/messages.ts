/**
 * What a query command and the workspace's query server say to each other over its socket: one
 * JSON object per line each way (`JSON.stringify` writes no raw line break, so a line is a
 * message). Written by hand rather than with `ndjson`: the client is part of every query
 * process's start, and `ndjson` brings Node's stream modules and two packages with it for a few
 * lines of text.
 */

/** Bumped when a message changes meaning: a server of another version declines (`protocol`). */
export const PROTOCOL = 1;

/** The environment variables a command's answer depends on, which a client sends and the server sets for it. */
export const SERVED_ENV = ["PI_CODING_AGENT_DIR", "HOME"] as const;

/** A command to run, as the person typed it, with what its output depends on. */
export interface RunRequest {
	readonly kind: "run";
	readonly protocol: number;
	/** The build of the CLI the client runs (`cliBuild`): a server of another build declines and ends. */
	readonly build: string;
	readonly argv: readonly string[];
	/** The client's folder: the server runs the command there (`process.chdir`), as the client would. */
	readonly cwd: string;
	/**
	 * What of the client's environment the CLI reads (`SERVED_ENV`): where Pi's sessions are
	 * (`PI_CODING_AGENT_DIR`, relative to `cwd` when relative; unset: `~/.pi/agent` of `HOME`).
	 */
	readonly env: Readonly<Record<string, string>>;
	/** Highlight matches (the client's stdout is a terminal and NO_COLOR is unset). */
	readonly color: boolean;
	/** The width human output fits in (the client's terminal, or `COLUMNS`). */
	readonly columns?: number;
	/** The client's stderr is a terminal: progress lines are sent (`status`). */
	readonly status: boolean;
}

/** What a server is and holds (`pbot-history server`), or a request that it end. */
export interface ControlRequest {
	readonly kind: "status" | "stop";
	readonly protocol: number;
}

export type ServerRequest = RunRequest | ControlRequest;

/** What the server is: said first on every connection. */
export interface ServerHello {
	readonly t: "hello";
	readonly pid: number;
	readonly workspace: string;
	readonly build: string;
	/** When it started, and when it ends unless asked again (ms since the epoch). */
	readonly since: number;
	readonly idleUntil: number;
	/** Bytes of search text it holds in memory. */
	readonly keptBytes: number;
	/** Commands it ran for clients. */
	readonly answered: number;
	/** Still reading the history into memory: a command is declined meanwhile (`warming`). */
	readonly warming: boolean;
}

export type ServerMessage =
	| ServerHello
	/** Sent every `ALIVE_MS` while a command waits for its turn or runs: the server is not hung. */
	| { readonly t: "alive" }
	/** A line of progress for a terminal (`undefined` clears it). */
	| { readonly t: "status"; readonly text?: string }
	/**
	 * The command ran: its exit code, and its output in the order written (fd 1 or 2, each text as
	 * `CliIo` was given it), all in one message, so a client has either all of it or none.
	 */
	| { readonly t: "done"; readonly code: number; readonly writes: readonly (readonly [1 | 2, string])[] }
	/**
	 * The command was not run, and the client runs it itself: the server is of another build (and
	 * ends), the command names another workspace or is not a query, the server is still reading the
	 * history, or speaks another protocol.
	 */
	| { readonly t: "declined"; readonly why: "build" | "workspace" | "command" | "warming" | "protocol" }
	/** The answer to `stop`: the server ends once the connection closes. */
	| { readonly t: "stopping" };

/** A message as a line. */
export function line(message: ServerRequest | ServerMessage): string {
	return `${JSON.stringify(message)}\n`;
}

/**
 * Messages from a stream of text chunks: `push` each chunk; each complete line is parsed and handed
 * to `each`. A line that is not JSON throws (the other side is not a pbot query server).
 */
export function lineReader<T>(each: (message: T) => void): (chunk: string) => void {
	let pending = "";
	return (chunk) => {
		pending += chunk;
		let end = pending.indexOf("\n");
		while (end >= 0) {
			const text = pending.slice(0, end);
			pending = pending.slice(end + 1);
			if (text !== "") each(JSON.parse(text) as T);
			end = pending.indexOf("\n");
		}
	};
}
