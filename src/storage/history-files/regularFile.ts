import type { BufferSource, ReusedBuffer } from "../../services/history/model/reusedBuffer.ts";
import { type BigIntStats, closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats, unlinkSync } from "node:fs";

/**
 * Never follows a symbolic link and never waits: a FIFO, a device or a link where one of pbot's
 * files should be is refused (a cloned repository can carry either), not read.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Something other than a regular file where pbot keeps one of its files (a symbolic link, a FIFO,
 * a device, a folder): refused, never followed, read or waited on.
 */
export class NotRegularFileError extends Error {
	override readonly name = "NotRegularFileError";
	readonly code = "ENOTREGULAR";
	constructor(
		readonly path: string,
		readonly kind: string,
	) {
		super(`${path} is ${kind}, not a regular file: not followed, read or written (remove it)`);
	}
}

/** What is at `path` without following a link: `undefined` when nothing, else `file` or what else it is. */
export function entryKind(path: string): "file" | string | undefined {
	const s = lstatSync(path, { throwIfNoEntry: false });
	if (!s) return undefined;
	return kindOf(s);
}

/** What a `stat` (not following links) says is there, in words. */
export function kindOf(s: Stats | BigIntStats): string {
	if (s.isFile()) return "file";
	if (s.isSymbolicLink()) return "a symbolic link";
	if (s.isFIFO()) return "a FIFO";
	if (s.isDirectory()) return "a folder";
	if (s.isSocket()) return "a socket";
	return "a device";
}

/** A regular file's text (UTF-8), or `undefined` when there is none; anything else at the name is a `NotRegularFileError`. */
export function readRegularText(path: string): string | undefined {
	return readRegularFile(path)?.bytes.toString("utf8");
}

/**
 * One of pbot's small JSON files (checkpoints, settings): its fields when it is there, parses and
 * carries this `format` and `version`; `undefined` when it is missing, unreadable, damaged or of
 * another format (the caller's defaults hold, and its next save rewrites it). Never read through a
 * link, never waited on as a FIFO: anything but a regular file is a `NotRegularFileError`.
 */
export function readJsonDocument(path: string, format: string, version: number): Readonly<Record<string, unknown>> | undefined {
	let text: string | undefined;
	try {
		text = readRegularText(path);
	} catch (err) {
		if (err instanceof NotRegularFileError) throw err;
		return undefined;
	}
	if (text === undefined) return undefined;
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return undefined;
	}
	if (typeof value !== "object" || value === null) return undefined;
	const document = value as Record<string, unknown>;
	return document.format === format && document.version === version ? document : undefined;
}

/**
 * `length` bytes of a regular file from `offset` (all of it by default; into `into` when they
 * fit, or into what a `BufferSource` such as a `ReusedBuffer` gives, valid until its next use) and its `stat` as of the read, or
 * `undefined` when there is none. Anything else at the name (a link, a FIFO, a folder) is an error
 * that says what it is. Synchronous: pbot's files are small and read whole, and a thread-pool round
 * trip per file cost more than the read.
 */
export function readRegularFile(
	path: string,
	options: { readonly offset?: number; readonly length?: number; readonly into?: Buffer | BufferSource; readonly extent?: (first: Buffer) => number } = {},
): { readonly bytes: Buffer; readonly stat: Stats } | undefined {
	return withRegularFile(path, (fd, stat) => {
		const fileSize = Number(stat.size);
		const offset = Math.min(options.offset ?? 0, fileSize);
		const size = options.length === undefined ? fileSize - offset : Math.min(options.length, fileSize - offset);
		const { into } = options;
		const take = (length: number): Buffer =>
			into !== undefined && !Buffer.isBuffer(into) ? into.take(length) : into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
		let bytes = take(size);
		let got = fill(fd, bytes, 0, size, offset);
		if (options.extent && got === size) {
			const total = Math.min(options.extent(bytes.subarray(0, got)), fileSize - offset);
			if (total > got) {
				const more = take(total);
				if (more.buffer !== bytes.buffer || more.byteOffset !== bytes.byteOffset) bytes.copy(more, 0, 0, got);
				bytes = more;
				got = fill(fd, bytes, got, total, offset);
			}
		}
		return { bytes: got === bytes.length ? bytes : bytes.subarray(0, got), stat };
	});
}

/**
 * A regular file's bytes, whole, and the `stat` (bigint: nanosecond times) of the descriptor they
 * were read through, taken before the read, or `undefined` when there is none; anything else at
 * the name is a `NotRegularFileError`. The stat describes the bytes read: a file replaced by
 * rename meanwhile is another inode, one changed in place has other times.
 */
export function readRegularFileStamped(path: string, into?: ReusedBuffer): { readonly bytes: Buffer; readonly stat: BigIntStats } | undefined {
	// The stat is taken before the read: a change made in place while it reads shows as another stamp.
	const opened = openForRead(path, (fd) => fstatSync(fd, { bigint: true }));
	if (!opened) return undefined;
	try {
		const size = Number(opened.stat.size);
		const bytes = into ? into.take(size) : Buffer.allocUnsafe(size);
		const got = fill(opened.fd, bytes, 0, bytes.length, 0);
		return { bytes: got === bytes.length ? bytes : bytes.subarray(0, got), stat: opened.stat };
	} finally {
		closeSync(opened.fd);
	}
}

/**
 * Reads `[offset, offset + length)` of a regular file a chunk at a time through `into` (one open,
 * so every chunk is of the same file even if it is replaced meanwhile), handing each chunk and
 * its file offset to `onChunk`, which must not keep it. `false` when there is no file or it ends
 * before `offset + length`; anything else at the name is a `NotRegularFileError`.
 */
export function readRegularFileChunks(path: string, offset: number, length: number, into: Buffer, onChunk: (bytes: Buffer, at: number) => void): boolean {
	const read = withRegularFile(path, (fd, stat) => {
		if (stat.size < offset + length) return false;
		for (let done = 0; done < length; ) {
			const got = fill(fd, into, 0, Math.min(into.length, length - done), offset + done);
			if (got === 0) return false;
			onChunk(into.subarray(0, got), offset + done);
			done += got;
		}
		return true;
	});
	return read === true;
}

/** A regular file held open for reads by range: many ranges, one open (the text pack). */
export interface OpenRegularFile {
	readonly size: number;
	/** The file as opened: its inode, size and modification time (another file, or a change, gives another). */
	readonly identity: string;
	/** Reads `length` bytes at `offset` into `into` from its start; returns how many (fewer at the file's end). */
	read(into: Buffer, offset: number, length: number): number;
	close(): void;
}

/** What tells one file from another, or from itself changed: its inode, size and modification time. */
export function fileIdentity(stat: Stats): string {
	return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/**
 * Removes a regular file if it is still the file whose `OpenRegularFile.identity` was `identity`;
 * `false` when it is gone or another file (or changed) now. Never follows a link.
 */
export function removeRegularFileIf(path: string, identity: string): boolean {
	const stat = lstatSync(path, { throwIfNoEntry: false });
	if (!stat?.isFile() || fileIdentity(stat) !== identity) return false;
	try {
		unlinkSync(path);
		return true;
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
		throw err;
	}
}

/**
 * Opens a regular file for reads by range (closed by `close`), or `undefined` when there is none;
 * anything else at the name is a `NotRegularFileError`. Every read is of the file as opened, even
 * if it is replaced meanwhile.
 */
export function openRegularFile(path: string): OpenRegularFile | undefined {
	const opened = openForRead(path);
	if (!opened) return undefined;
	const { fd, stat } = opened;
	let open = true;
	return {
		size: stat.size,
		identity: fileIdentity(stat),
		read: (into, offset, length) => fill(fd, into, 0, Math.min(length, into.length), offset),
		close: () => {
			if (open) closeSync(fd);
			open = false;
		},
	};
}

/**
 * Opens a regular file read-only, never through a link and never waiting (`READ_FLAGS`), and
 * gives `use` its descriptor and `stat`, closing it after. `undefined` when there is nothing at
 * the name; anything but a regular file is a `NotRegularFileError`.
 */
function withRegularFile<T>(path: string, use: (fd: number, stat: Stats) => T): T | undefined {
	const opened = openForRead(path);
	if (!opened) return undefined;
	try {
		return use(opened.fd, opened.stat);
	} finally {
		closeSync(opened.fd);
	}
}

/**
 * A regular file's descriptor (`READ_FLAGS`) and `stat` (`statOf` it: plain, or bigint for
 * nanosecond times); `undefined` when nothing is at the name; else a `NotRegularFileError`.
 */
function openForRead<S extends Stats | BigIntStats = Stats>(
	path: string,
	statOf: (fd: number) => S = (fd) => fstatSync(fd) as S,
): { readonly fd: number; readonly stat: S } | undefined {
	let fd: number;
	try {
		fd = openSync(path, READ_FLAGS);
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return undefined;
		if (code === "ELOOP") throw new NotRegularFileError(path, "a symbolic link");
		throw err;
	}
	try {
		const stat = statOf(fd);
		if (!stat.isFile()) throw new NotRegularFileError(path, kindOf(stat));
		return { fd, stat };
	} catch (err) {
		closeSync(fd);
		throw err;
	}
}

/** Reads `[from, to)` of `bytes` from the file at `offset + from`; returns how far it got (less at the file's end). */
function fill(fd: number, bytes: Buffer, from: number, to: number, offset: number): number {
	let got = from;
	while (got < to) {
		const n = readSync(fd, bytes, got, to - got, offset + got);
		if (n === 0) break;
		got += n;
	}
	return got;
}
