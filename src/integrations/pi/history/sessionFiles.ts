import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { Observable } from "rxjs";
import { isValidId } from "../../../services/history/ids.ts";
import type { SessionSource, SourceState } from "../../../services/history/ports.ts";
import { sessionIdFromFileName } from "../../../services/history/sessionFileName.ts";

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
	return new Observable<Uint8Array>((subscriber) => {
		const stream = createReadStream(path, { highWaterMark: READ_CHUNK });
		stream.on("data", (chunk) => subscriber.next(chunk as Buffer));
		stream.on("error", (err) => subscriber.error(err));
		stream.on("end", () => subscriber.complete());
		return () => stream.destroy();
	});
}

/** Buffers lent to `readFileChunksReusing`, two per concurrent read. */
const spare: Buffer[] = [];
/** Its chunk: 1 MB measured best (4 MB and 512 KB were both slower on a 1 GB history). */
const REUSED_CHUNK = 1 << 20;

/**
 * Streams a file's bytes through two reused 1 MB buffers: each chunk is valid only until the
 * subscriber's `next` returns (the replay pipeline consumes it synchronously and copies the
 * little it keeps). Reading a gigabyte then allocates two megabytes, not a gigabyte of chunks:
 * measured on the 1 GB bench history, 10 % faster and 50 MB less peak RSS than fresh chunks.
 * The next chunk is read while the subscriber works on this one: without that, the pipeline sat
 * idle for every read (a fifth of the time on the 120 MB session).
 */
export function readFileChunksReusing(path: string, onOpened?: (info: { size: number; mtimeMs: number; head: Uint8Array }) => void): Observable<Uint8Array> {
	return new Observable<Uint8Array>((subscriber) => {
		let closed = false;
		let filling = spare.pop() ?? Buffer.allocUnsafe(REUSED_CHUNK);
		let other = spare.pop() ?? Buffer.allocUnsafe(REUSED_CHUNK);
		void (async () => {
			let handle;
			let pending: Promise<{ bytesRead: number }> | undefined;
			try {
				handle = await open(path, "r");
				// Size and time before the first byte is read: a file that grows meanwhile shows as changed.
				const info = onOpened ? await handle.stat() : undefined;
				pending = handle.read(filling, 0, REUSED_CHUNK, null);
				let first = true;
				for (;;) {
					const { bytesRead } = await pending;
					pending = undefined;
					if (bytesRead === 0 || closed) break;
					const chunk = filling.subarray(0, bytesRead);
					if (first && info && onOpened) onOpened({ size: info.size, mtimeMs: info.mtimeMs, head: chunk.subarray(0, Math.min(CHECKPOINT_HEAD, info.size)) });
					first = false;
					[filling, other] = [other, filling];
					// Reads are sequential (position null): this one starts where the last ended.
					pending = handle.read(filling, 0, REUSED_CHUNK, null);
					subscriber.next(chunk);
				}
				subscriber.complete();
			} catch (err) {
				subscriber.error(err);
			} finally {
				await pending?.catch(() => undefined);
				await handle?.close();
				spare.push(filling, other);
			}
		})();
		return () => {
			closed = true;
		};
	});
}

/** A session file as a source for the history service. */
export function sessionFileSource(path: string): SessionSource {
	const fallback = sessionIdFromFileName(path);
	return {
		key: path,
		...(fallback && isValidId(fallback) ? { fallbackSessionId: fallback } : {}),
		stateKey: stateKeyOf(path, fallback),
		read: (onState) =>
			readFileChunksReusing(
				path,
				onState && ((opened) => onState({ key: stateKeyOf(path, fallback), size: opened.size, mtimeMs: opened.mtimeMs, headHash: headHashOf(opened.head) })),
			),
		fingerprint: async () => {
			try {
				const s = await stat(path, { bigint: true });
				return `${s.size}:${s.mtimeNs}:${s.ino}`;
			} catch {
				return undefined;
			}
		},
		state: () => sourceState(path, fallback),
	};
}

/**
 * A file's checkpoint state: size, mtime and a hash of its first 4 KB, keyed by the session id in
 * its name and the name (never the path). One `open`, one `fstat`, one read.
 */
export async function sourceState(path: string, sessionId = sessionIdFromFileName(path)): Promise<SourceState | undefined> {
	let handle;
	try {
		handle = await open(path, "r");
		const info = await handle.stat();
		const head = Buffer.alloc(Math.min(CHECKPOINT_HEAD, info.size));
		const { bytesRead } = await handle.read(head, 0, head.length, 0);
		return { key: stateKeyOf(path, sessionId), size: info.size, mtimeMs: info.mtimeMs, headHash: headHashOf(head.subarray(0, bytesRead)) };
	} catch {
		return undefined;
	} finally {
		await handle?.close();
	}
}

/** A checkpoint's key: the session id in the file's name and the name, never the path. */
function stateKeyOf(path: string, sessionId: string | undefined): string {
	return `${sessionId ?? ""}/${basename(path)}`;
}

function headHashOf(head: Uint8Array): string {
	return createHash("sha256").update(head).digest("base64url").slice(0, 22);
}

/**
 * Reads only the first line of a session file. `undefined` for an empty, unreadable or
 * not-yet-written file, or one whose first line is not a session header.
 */
export async function readSessionHead(path: string): Promise<SessionHead | undefined> {
	let handle;
	try {
		handle = await open(path, "r");
		const buffer = Buffer.alloc(HEAD_LIMIT);
		const { bytesRead } = await handle.read(buffer, 0, HEAD_LIMIT, 0);
		const text = buffer.subarray(0, bytesRead).toString("utf8");
		const newline = text.indexOf("\n");
		const first = newline === -1 ? text : text.slice(0, newline);
		const value = JSON.parse(first) as Record<string, unknown>;
		if (typeof value !== "object" || value === null || value.type !== "session") return undefined;
		return {
			...(typeof value.id === "string" ? { id: value.id } : {}),
			...(typeof value.cwd === "string" ? { cwd: value.cwd } : {}),
			...(typeof value.parentSession === "string" ? { parentSession: value.parentSession } : {}),
			...(typeof value.version === "number" ? { version: value.version } : {}),
		};
	} catch {
		return undefined;
	} finally {
		await handle?.close();
	}
}

/** `*.jsonl` files directly in a folder (Pi does not nest them), sorted by name; none if it is missing. */
export async function listSessionFiles(dir: string): Promise<string[]> {
	let names: string[];
	try {
		names = await readdir(dir);
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code;
		if (code === "ENOENT" || code === "ENOTDIR") return [];
		throw err;
	}
	return names
		.filter((n) => n.endsWith(".jsonl"))
		.sort()
		.map((n) => join(dir, n));
}

export function fileLabel(path: string): string {
	return basename(path);
}
