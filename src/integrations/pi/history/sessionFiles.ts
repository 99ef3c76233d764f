import { createHash } from "../../../services/history/model/lazyCrypto.ts";
import { closeSync, constants, createReadStream, fstatSync, openSync, readdirSync, readSync, type Stats, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Observable } from "rxjs";
import { searchableBuffer } from "../../../services/history/model/byteSearch.ts";
import { isValidId } from "../../../services/history/model/ids.ts";
import type { SessionSource, SourceState } from "../../../services/history/service/ports.ts";
import { sessionIdFromFileName } from "../../../services/history/model/sessionFileName.ts";
import { observableClass } from "./lazyRxjs.ts";

/** An Observable, RxJS loaded when a file is first read (`lazyRxjs.ts`). */
function newObservable<T>(subscribe: ConstructorParameters<typeof Observable<T>>[0]): Observable<T> {
	const RxObservable = observableClass();
	return new RxObservable<T>(subscribe);
}

/** Chunk size for replaying a file: large enough that the per-chunk cost disappears. */
const READ_CHUNK = 1 << 20;
/** A header line longer than this is not a Pi header. */
const HEAD_LIMIT = 64 * 1024;
/** Bytes hashed for a checkpoint: the header and the first entries. */
const CHECKPOINT_HEAD = 4096;

/** What the first line of a session file says, for deciding scope. Paths stay here, in memory. */
export interface SessionHead {
	readonly id?: string;
	readonly cwd?: string;
	readonly parentSession?: string;
	readonly version?: number;
}

/** Streams a file's bytes. The file is opened read-only; native session files are never written. */
export function readFileChunks(path: string): Observable<Uint8Array> {
	return newObservable<Uint8Array>((subscriber) => {
		const stream = createReadStream(path, { highWaterMark: READ_CHUNK });
		stream.on("data", (chunk) => subscriber.next(chunk as Buffer));
		stream.on("error", (err) => subscriber.error(err));
		stream.on("end", () => subscriber.complete());
		return () => stream.destroy();
	});
}

/** Buffers lent to `readFileChunksReusing`, one per read in progress. */
const spare: Buffer[] = [];
/** Its chunk: 1 MB measured best (4 MB and 512 KB were both slower on a 1 GB history). */
const REUSED_CHUNK = 1 << 20;
/**
 * How session files are opened: read-only and non-blocking, so a FIFO named like a session file
 * cannot hold the event loop or a thread-pool thread (no effect on regular files); the readers
 * then refuse anything but a regular file.
 */
const READ_NONBLOCKING = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * A session file opened for reading (`READ_NONBLOCKING`) with its `fstat`; `undefined`, closed
 * again, when what is there is no regular file (a FIFO, a folder). What every reader of a session
 * file opens it with: the ingest's chunks, the header reads, the live tail.
 */
export function openSessionFile(path: string): { readonly fd: number; readonly stat: Stats } | undefined {
	const fd = openSync(path, READ_NONBLOCKING);
	let stat: Stats;
	try {
		stat = fstatSync(fd);
	} catch (err) {
		closeSync(fd);
		throw err;
	}
	if (stat.isFile()) return { fd, stat };
	closeSync(fd);
	return undefined;
}
/** Chunks read and handed on per turn of the event loop: a few milliseconds of parsing, then others run. */
const CHUNKS_PER_TURN = 2;

/**
 * Streams a file's bytes through one reused 1 MB buffer: each chunk is valid only until the
 * subscriber's `next` returns (the replay pipeline consumes it synchronously and copies the
 * little it keeps). Reading a gigabyte then allocates a megabyte, not a gigabyte of chunks.
 *
 * The reads are synchronous, a few chunks per turn of the event loop (the first turn after the
 * subscription, then one per `setImmediate`). A session file is read whole and at once, mostly
 * from the page cache, where a read is a copy: each asynchronous read cost the event loop a
 * hand-off to the thread pool and back (which the writes of archives keep busy), and the loop sat
 * waiting for them — on the 1 GB bench history, synchronous reads made the cold ingest 8–9 %
 * faster (adjacent pairs). Between turns other work runs (Pi's input, the writes' callbacks), so
 * the loop is never held longer than the parsing of `CHUNKS_PER_TURN` chunks, plus the read itself
 * when the file is not cached.
 */
export function readFileChunksReusing(path: string, onOpened?: (info: { size: number; mtimeMs: number; head: Uint8Array }) => void): Observable<Uint8Array> {
	return newObservable<Uint8Array>((subscriber) => {
		let fd: number | undefined;
		let buffer: Buffer | undefined;
		let info: { size: number; mtimeMs: number } | undefined;
		let first = true;
		let pending: NodeJS.Immediate | undefined;
		const release = () => {
			if (fd !== undefined) {
				try {
					closeSync(fd);
				} catch {
					// closing a read-only descriptor: nothing to lose
				}
				fd = undefined;
			}
			if (buffer) spare.push(buffer);
			buffer = undefined;
		};
		const turn = () => {
			pending = undefined;
			try {
				if (fd === undefined) {
					const opened = openSessionFile(path);
					if (!opened) throw new Error(`${basename(path)} is not a regular file`);
					fd = opened.fd;
					const s = opened.stat;
					// (Where the byte search module can scan it: the ingest's JSON strings, `scanMessageLine.ts`.)
					buffer = spare.pop() ?? searchableBuffer(REUSED_CHUNK) ?? Buffer.allocUnsafe(REUSED_CHUNK);
					// Size and time before the first byte is read: a file that grows meanwhile shows as changed.
					info = { size: s.size, mtimeMs: s.mtimeMs };
				}
				for (let n = 0; n < CHUNKS_PER_TURN; n++) {
					const chunk = (buffer as Buffer).subarray(0, readSync(fd as number, buffer as Buffer, 0, REUSED_CHUNK, null));
					if (chunk.length === 0) {
						// An empty file is opened too: its state (size 0) is what lets a checkpoint skip it next time.
						if (first && info && onOpened) onOpened({ ...info, head: chunk });
						release();
						subscriber.complete();
						return;
					}
					if (first && info && onOpened) onOpened({ ...info, head: chunk.subarray(0, Math.min(CHECKPOINT_HEAD, info.size)) });
					first = false;
					subscriber.next(chunk);
					if (subscriber.closed) return; // unsubscribed meanwhile: released by the teardown
				}
				pending = setImmediate(turn);
			} catch (err) {
				release();
				subscriber.error(err);
			}
		};
		pending = setImmediate(turn);
		return () => {
			if (pending) clearImmediate(pending);
			release();
		};
	});
}

/** A session file as a source for the history service. */
export function sessionFileSource(path: string): SessionSource {
	const name = basename(path);
	const fallback = sessionIdFromFileName(name);
	const stateKey = stateKeyOf(name, fallback);
	return {
		key: path,
		...(fallback && isValidId(fallback) ? { fallbackSessionId: fallback } : {}),
		stateKey,
		read: (onState) =>
			readFileChunksReusing(
				path,
				onState && ((opened) => onState({ key: stateKey, size: opened.size, mtimeMs: opened.mtimeMs, headHash: headHashOf(opened.head) })),
			),
		// A synchronous `stat`: taken for every file at every refresh, where a thread-pool round trip
		// per file cost more than the call.
		fingerprint: async () => {
			const s = statSync(path, { throwIfNoEntry: false });
			return s ? fingerprintOf(s) : undefined;
		},
		state: () => sourceState(path, fallback),
	};
}

/** What tells a file unchanged since it was last read: size, mtime, inode, ctime (a copy or a touch changes it). */
export function fingerprintOf(s: Stats): string {
	return `${s.size}:${s.mtimeMs}:${s.ino}:${s.ctimeMs}`;
}

/**
 * A file's checkpoint state: size, mtime and a hash of its first 4 KB, keyed by the session id in
 * its name and the name (never the path). One `open`, one `fstat`, one read.
 */
export async function sourceState(path: string, sessionId = sessionIdFromFileName(path)): Promise<SourceState | undefined> {
	// Synchronous, into one shared buffer: a refresh takes this for every file, and four thread-pool
	// round trips per file (open, stat, read, close) cost a new process more than the reads.
	return readFirstBytes(path, CHECKPOINT_HEAD, (head, info) => ({
		key: stateKeyOf(basename(path), sessionId),
		size: info.size,
		mtimeMs: info.mtimeMs,
		headHash: headHashOf(head),
	}));
}

/** Shared by the synchronous readers below (one read at a time: nothing awaits in between). */
const firstBytes = Buffer.allocUnsafe(HEAD_LIMIT);
/** The first read of a header line, doubled until the line ends (or `HEAD_LIMIT`). */
const LINE_STEP = 2048;

/**
 * Opens a regular file (non-blocking: a FIFO cannot hold the event loop), reads up to `length`
 * bytes from its start into a shared buffer, and hands them to `use` (which must not keep them).
 * `undefined` for a missing, unreadable or non-regular file, or when `use` throws.
 */
function readFirstBytes<T>(
	path: string,
	length: number,
	use: (head: Buffer, info: { size: number; mtimeMs: number }) => T | undefined,
	untilNewline = false,
): T | undefined {
	let fd: number | undefined;
	try {
		const opened = openSessionFile(path);
		if (!opened) return undefined;
		fd = opened.fd;
		const info = opened.stat;
		const wanted = Math.min(length, info.size, firstBytes.length);
		let got = 0;
		while (got < wanted) {
			// A line is read a step at a time: a header is a few hundred bytes, and reading 64 KB of
			// each of a thousand files to find it cost a new Pi ~50 ms before its first search.
			const step = untilNewline ? Math.min(wanted - got, Math.max(LINE_STEP, got)) : wanted - got;
			const n = readSync(fd, firstBytes, got, step, got);
			if (n === 0) break;
			got += n;
			if (untilNewline && firstBytes.subarray(got - n, got).includes(0x0a)) break;
		}
		return use(firstBytes.subarray(0, got), info);
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** A checkpoint's key: the session id in the file's name and the name, never the path. */
/** A checkpoint's key: the session id in the file's name, and the name (never the path). */
function stateKeyOf(name: string, sessionId: string | undefined): string {
	return `${sessionId ?? ""}/${name}`;
}

function headHashOf(head: Uint8Array): string {
	return createHash("sha256").update(head).digest("base64url").slice(0, 22);
}

/**
 * Reads only the first line of a session file. `undefined` for an empty, unreadable or
 * not-yet-written file, or one whose first line is not a session header.
 */
export function readSessionHead(path: string): SessionHead | undefined {
	return readFirstBytes(
		path,
		HEAD_LIMIT,
		(bytes) => {
			const newline = bytes.indexOf(0x0a);
			const value = JSON.parse(bytes.toString("utf8", 0, newline === -1 ? bytes.length : newline)) as Record<string, unknown>;
			if (typeof value !== "object" || value === null || value.type !== "session") return undefined;
			return {
				...(typeof value.id === "string" ? { id: value.id } : {}),
				...(typeof value.cwd === "string" ? { cwd: value.cwd } : {}),
				...(typeof value.parentSession === "string" ? { parentSession: value.parentSession } : {}),
				...(typeof value.version === "number" ? { version: value.version } : {}),
			};
		},
		true,
	);
}

/**
 * `*.jsonl` files directly in a folder (Pi does not nest them), sorted by name; none if it is
 * missing or no folder (`named`: then that is an error too, for the caller to say).
 */
export async function listSessionFiles(dir: string, named = false): Promise<string[]> {
	let names: string[];
	try {
		// Synchronous: a listing is a few system calls, and a thread-pool round trip cost Pi's first search more.
		names = readdirSync(dir);
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code;
		if (!named && (code === "ENOENT" || code === "ENOTDIR")) return [];
		throw err;
	}
	// The folder normalised once, not with each of thousands of names (a refresh lists it every time).
	const prefix = join(dir, "_").slice(0, -1);
	return names
		.filter((n) => n.endsWith(".jsonl"))
		.sort()
		.map((n) => prefix + n);
}
