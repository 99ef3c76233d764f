/**
 * A query command's side of the query server: it sends the command as typed and writes what the
 * server answers, or says why it could not, and the command then runs in its own process (the
 * answer is the same either way: the server runs the same CLI). Loaded by the bin's launcher, so
 * it stays small: `node:net` is loaded only by a query command, when it asks.
 */
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { line, lineReader, PROTOCOL, type RunRequest, type ServerHello, type ServerMessage } from "./messages.ts";

/**
 * Node's own modules, loaded when first used: `require`, not `import()`, which would make a
 * CommonJS process set up the ES module loader (≈ 10–15 ms) and which a `node:vm` script (the
 * CLI's code-cached one) cannot call.
 */
export const load = createRequire(import.meta.url);

/** What came of asking a server. */
export type Asked =
	| { readonly kind: "answered"; readonly code: number }
	/** No server listens there (none was started, or it ended): the caller may start one. */
	| { readonly kind: "none" }
	/** A server is there and did not run the command (`build`: it is of another build, and ends now). */
	| { readonly kind: "declined"; readonly why: string }
	/**
	 * The connection failed or broke, or (`silent`) a process holds the socket and says nothing: no
	 * hello in time, or no word for `SILENT_MS` while the command waits (a stopped or hung server:
	 * the caller may start another, which takes the socket over).
	 */
	| { readonly kind: "failed"; readonly why: string; readonly silent?: true };

/** Where the client writes what the server answers. */
export interface ClientIo {
	readonly write: (fd: 1 | 2, text: string) => void;
	/** Progress lines, when stderr is a terminal. */
	readonly status?: ((text: string | undefined) => void) | undefined;
}

/**
 * How long a server may take to say hello: it does at once, unless a scan holds its event loop
 * (tens of ms). One that does not is not waited for: the command runs in its own process.
 */
export const HELLO_MS = 2000;

/**
 * How long a command waits without a word from the server: a server sends `alive` every
 * `ALIVE_MS` (`server.ts`) while a command waits for its turn or runs, so one that says nothing for
 * this long is stopped or hung, and the command runs in its own process.
 */
export const SILENT_MS = 5000;

/** Asks the server at `socket` to run `request`, writing its answer to `io`. */
export async function askServer(socket: string, request: Omit<RunRequest, "kind" | "protocol">, io: ClientIo, helloMs = HELLO_MS): Promise<Asked> {
	let shown = false;
	const asked = await exchange(socket, { kind: "run", protocol: PROTOCOL, ...request }, helloMs, (message, finish) => {
		if (message.t === "status") {
			shown = message.text !== undefined;
			io.status?.(message.text);
		} else if (message.t === "done") {
			finish({ kind: "answered", code: message.code });
			if (shown) io.status?.(undefined);
			for (const [fd, text] of message.writes) io.write(fd, text);
		} else if (message.t === "declined") finish({ kind: "declined", why: message.why });
	});
	if (shown && asked.kind !== "answered") io.status?.(undefined);
	return asked;
}

/** What the server at `socket` is (`undefined`: none answers there), or (`stop`) asks it to end. */
export async function askControl(socket: string, kind: "status" | "stop", helloMs = HELLO_MS): Promise<ServerHello | undefined> {
	const { hello } = await control(socket, kind, helloMs);
	return hello;
}

/** `askControl`, with what came of asking when no server answered (none there, or a silent one). */
export async function control(socket: string, kind: "status" | "stop", helloMs = HELLO_MS): Promise<{ readonly hello?: ServerHello; readonly asked: Asked }> {
	let hello: ServerHello | undefined;
	const asked = await exchange(socket, { kind, protocol: PROTOCOL }, helloMs, (message, finish) => {
		if (message.t === "hello") {
			hello = message;
			if (kind === "status") finish({ kind: "answered", code: 0 });
		} else if (message.t === "stopping") finish({ kind: "answered", code: 0 });
	});
	return asked.kind === "answered" && hello ? { hello, asked } : { asked };
}

/**
 * One connection: sends `request`, hands each message after the hello to `each` until it calls
 * `finish`, then closes. No hello within `helloMs` of connecting, an error, or a close before
 * `finish`: the outcome says which.
 */
async function exchange(
	socket: string,
	request: object,
	helloMs: number,
	each: (message: ServerMessage, finish: (outcome: Asked) => void) => void,
): Promise<Asked> {
	const { connect } = load("node:net") as typeof import("node:net");
	return new Promise<Asked>((resolveAsked) => {
		let done = false;
		let helloSeen = false;
		const connection: Socket = connect(socket);
		const finish = (outcome: Asked) => {
			if (done) return;
			done = true;
			clearTimeout(timer);
			connection.destroy();
			resolveAsked(outcome);
		};
		let timer = setTimeout(() => finish({ kind: "failed", why: `no hello within ${helloMs} ms`, silent: true }), helloMs);
		connection.setEncoding("utf8");
		connection.on("connect", () => connection.write(line(request as never)));
		const read = lineReader<ServerMessage>((message) => {
			if (done) return;
			if (!helloSeen && message.t !== "hello") return finish({ kind: "failed", why: "the server did not say hello" });
			helloSeen = true;
			// Any word from the server: it is alive (`alive` says nothing else).
			clearTimeout(timer);
			timer = setTimeout(() => finish({ kind: "failed", why: `no word from the server for ${SILENT_MS} ms`, silent: true }), SILENT_MS);
			each(message, finish);
		});
		connection.on("data", (chunk: string) => {
			try {
				read(chunk);
			} catch {
				finish({ kind: "failed", why: "the server's answer is not JSON" });
			}
		});
		connection.on("error", (err: NodeJS.ErrnoException) => {
			// No socket, or one no process listens on (its server ended without removing it).
			finish(err.code === "ENOENT" || err.code === "ECONNREFUSED" ? { kind: "none" } : { kind: "failed", why: err.message });
		});
		connection.on("close", () => finish({ kind: "failed", why: "the server closed the connection" }));
	});
}
