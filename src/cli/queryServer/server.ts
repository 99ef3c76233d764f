/**
 * The workspace's query server: a process that keeps the workspace's history open, with its
 * search text in memory (`keepText`), and runs the query commands (`search`, `sessions`, `read`)
 * that the bin's client sends it. A command then costs Node's start, a connection and a search of
 * text already in memory, not the history's opening: on the bench's 1 GB history a search process
 * took ≈ 250 ms alone, ≈ 130 ms through a server (`bench/RESULTS.md`).
 *
 * It runs the same CLI as the command would (`runCli`), with the command's arguments, folder and
 * terminal, so the answer is the same; each command brings the history up to date first, as in its
 * own process (session files appended to, another process's ingest).
 *
 * The first query command of a workspace starts it (`startServer`) after answering by itself. It
 * ends after `idleMs` without a command, when asked (`pbot-history server stop`), when a command of
 * another build asks it (the package was updated), and when its socket is gone or is another
 * server's (`.pi/pbot` deleted, two started at once: the last one stays). It writes nothing but its
 * socket in `.pi/pbot/` (the history's own files are written as any query's are).
 */
import { lstatSync, renameSync, rmSync, statSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import type { CliIo } from "../main.ts";
import { SERVED_COMMANDS, socketOf } from "./address.ts";
import { askControl } from "./client.ts";
import { KeptServices } from "./keptServices.ts";
import { line, lineReader, PROTOCOL, type RunRequest, SERVED_ENV, type ServerMessage, type ServerRequest } from "./messages.ts";

export interface ServeOptions {
	/** The command that started the server, run again (its output dropped) to open what it opened, and its workspace. */
	readonly first: { readonly argv: readonly string[]; readonly cwd: string; readonly workspace: string };
	/** The CLI's build (`cliBuild`): a command of another one is declined, and the server ends. */
	readonly build: string;
	readonly runCli: (argv: readonly string[], io: CliIo) => Promise<number>;
	readonly idleMs: number;
	/** Bytes of search text each open history keeps in memory (`HistoryServiceOptions.keepText`). */
	readonly keepText: number;
}

/** How often the server looks whether its socket is still its own. */
const CHECK_MS = 2000;
/** How often a waiting command's client hears that the server is alive (well within the client's `SILENT_MS`). */
const ALIVE_MS = 1000;

/** Serves until the server ends; resolves then (the process may exit). */
export async function serveQueries(options: ServeOptions): Promise<void> {
	const workspace = options.first.workspace;
	const socket = socketOf(workspace);
	if (socket === undefined) return;
	const folder = dirname(socket);
	// Only into a `.pi/pbot` the command made or found (a real folder; `paths.ts` checked it).
	if (!lstatSync(folder, { throwIfNoEntry: false })?.isDirectory()) return;
	// The socket is the owner's alone: another user could otherwise ask for this history.
	process.umask(0o077);

	const server = createServer();
	const mine = join(folder, `query-server.${process.pid}.sock`);
	rmSync(mine, { force: true });
	await new Promise<void>((ok, fail) => {
		server.once("error", fail);
		server.listen(mine, () => ok());
	});
	// One server per workspace: a live one of this build stays, one of another build is asked to end.
	const there = await askControl(socket, "status");
	if (there && there.build === options.build) {
		await close(server, mine);
		return;
	}
	if (there) await askControl(socket, "stop");
	// Put in place at once: a command between the check and here finds one server or the other.
	let inode: number;
	try {
		renameSync(mine, socket);
		inode = statSync(socket).ino;
	} catch {
		await close(server, mine);
		return;
	}
	return new Promise<void>((ended) => {
		const state = new ServerState(options, workspace, server, socket, inode, ended);
		state.start();
	});
}

/** A server's life: its connections, the commands it runs one at a time, and its end. */
class ServerState {
	private warming = true;
	private answered = 0;
	private readonly since = Date.now();
	private lastUsed = Date.now();
	private idleTimer: NodeJS.Timeout | undefined;
	private checkTimer: NodeJS.Timeout | undefined;
	private queue: Promise<void> = Promise.resolve();
	private ending = false;
	private readonly services: KeptServices;

	constructor(
		private readonly options: ServeOptions,
		private readonly workspace: string,
		private readonly server: Server,
		private readonly socket: string,
		private readonly inode: number,
		private readonly ended: () => void,
	) {
		this.services = new KeptServices(workspace, options.keepText);
	}

	start(): void {
		this.server.on("connection", (connection) => this.accept(connection));
		this.checkTimer = setInterval(() => this.checkSocket(), CHECK_MS);
		this.touch();
		this.queue = this.warm();
	}

	/**
	 * Opens what the first command opened and reads the search text into memory; commands are
	 * declined meanwhile (their own process answers as fast as a server that is reading).
	 */
	private async warm(): Promise<void> {
		try {
			// (In the first command's folder, as the commands that follow: see `run`.)
			process.chdir(this.options.first.cwd);
			await this.options.runCli(
				this.options.first.argv,
				this.io(this.options.first.cwd, () => {}),
			);
			for (const service of this.services.all()) {
				await service.warm({ texts: true });
				service.takeWarnings();
			}
		} catch {
			// (Said by the commands that follow, which open the history again.)
		}
		this.warming = false;
	}

	private accept(connection: Socket): void {
		connection.setEncoding("utf8");
		connection.on("error", () => {});
		this.send(connection, this.hello());
		let asked = false;
		const read = lineReader<ServerRequest>((request) => {
			if (asked) return;
			asked = true;
			this.answer(connection, request);
		});
		connection.on("data", (chunk: string) => {
			try {
				read(chunk);
			} catch {
				connection.destroy();
			}
		});
	}

	private answer(connection: Socket, request: ServerRequest): void {
		const atOnce = this.answerAtOnce(request);
		if (atOnce !== undefined) {
			this.reply(connection, atOnce);
			// (A command of another build: the package changed under this server, which ends.)
			if (atOnce.t === "stopping" || (atOnce.t === "declined" && atOnce.why === "build")) this.end();
		} else if (request.kind === "status") connection.end();
		else if (request.kind === "run") {
			this.touch();
			// A word while the command waits for its turn or runs, so that its client can tell a busy
			// server from a stopped one (`SILENT_MS`).
			const alive = setInterval(() => this.send(connection, { t: "alive" }), ALIVE_MS);
			this.queue = this.queue.then(() => this.run(connection, request)).finally(() => clearInterval(alive));
		}
	}

	/** What is answered at once, not by running the request: a decline, or `stopping`. */
	private answerAtOnce(request: ServerRequest): ServerMessage | undefined {
		if (request.protocol !== PROTOCOL) return { t: "declined", why: "protocol" };
		if (request.kind !== "run") return request.kind === "stop" ? { t: "stopping" } : undefined;
		if (request.build !== this.options.build) return { t: "declined", why: "build" };
		if (this.warming) return { t: "declined", why: "warming" };
		if (!SERVED_COMMANDS.has(request.argv[0] ?? "")) return { t: "declined", why: "command" };
		return undefined;
	}

	private async run(connection: Socket, request: RunRequest): Promise<void> {
		if (connection.destroyed) return;
		// The command's folder and environment, where the CLI reads them (commands run one at a time):
		// a relative `PI_CODING_AGENT_DIR` or `~` is the client's, not this process's.
		for (const name of SERVED_ENV) {
			const value = request.env?.[name];
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
		try {
			process.chdir(request.cwd);
		} catch {
			return this.reply(connection, { t: "declined", why: "workspace" });
		}
		const writes: [1 | 2, string][] = [];
		const io = this.io(request.cwd, (fd, text) => writes.push([fd, text]), request);
		this.services.declined = false;
		this.statusTo = connection;
		let code: number;
		try {
			code = await this.options.runCli(request.argv, io);
		} catch (err) {
			code = 1;
			writes.push([2, `pbot-history: ${(err as Error).message}`]);
		} finally {
			this.statusTo = undefined;
		}
		this.touch();
		if (!this.services.declined) this.answered++;
		this.reply(connection, this.services.declined ? { t: "declined", why: "workspace" } : { t: "done", code, writes });
	}

	/** The CLI's io for a command from `cwd`: its writes to `write`, its terminal as the client's. */
	private io(cwd: string, write: (fd: 1 | 2, text: string) => void, request?: RunRequest): CliIo {
		const status = request?.status === true ? (text: string | undefined) => this.sendStatus(text) : undefined;
		this.services.current = { say: (text) => write(2, text), status };
		return {
			stdout: (text) => write(1, text),
			stderr: (text) => write(2, text),
			cwd,
			color: request?.color ?? false,
			columns: request?.columns,
			status,
			open: this.services.open,
		};
	}

	/** Progress of the command running, to its client. */
	private statusTo: Socket | undefined;
	private sendStatus(text: string | undefined): void {
		if (this.statusTo) this.send(this.statusTo, text === undefined ? { t: "status" } : { t: "status", text });
	}

	private hello(): ServerMessage {
		return {
			t: "hello",
			pid: process.pid,
			workspace: this.workspace,
			build: this.options.build,
			since: this.since,
			idleUntil: this.lastUsed + this.options.idleMs,
			keptBytes: this.services.keptBytes(),
			answered: this.answered,
			warming: this.warming,
		};
	}

	private send(connection: Socket, message: ServerMessage): void {
		if (!connection.destroyed) connection.write(line(message));
	}

	private reply(connection: Socket, message: ServerMessage): void {
		if (!connection.destroyed) connection.end(line(message));
	}

	private touch(): void {
		this.lastUsed = Date.now();
		clearTimeout(this.idleTimer);
		this.idleTimer = setTimeout(() => this.end(), this.options.idleMs);
	}

	/** Ends when the socket is gone or is not this server's any more. */
	private checkSocket(): void {
		let now: number | undefined;
		try {
			now = statSync(this.socket, { throwIfNoEntry: false })?.ino;
		} catch {
			// (Its folder unreadable now: as good as gone.)
		}
		if (now !== this.inode) this.end(false);
	}

	/** Stops listening, removes the socket when it is still this server's, and ends once the command running is done. */
	private end(removeSocket = true): void {
		if (this.ending) return;
		this.ending = true;
		clearTimeout(this.idleTimer);
		clearInterval(this.checkTimer);
		try {
			if (removeSocket && statSync(this.socket, { throwIfNoEntry: false })?.ino === this.inode) rmSync(this.socket, { force: true });
		} catch {
			// (Left for the next server, which replaces it.)
		}
		this.server.close();
		void this.queue.finally(() => this.ended());
	}
}

/** Closes a server that never took its place, and removes its socket. */
function close(server: Server, socket: string): Promise<void> {
	return new Promise((done) =>
		server.close(() => {
			rmSync(socket, { force: true });
			done();
		}),
	);
}
