import { closeSync, openSync, renameSync, rmSync, type Stats, writeSync, promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
	/**
	 * Skip the folder sync: the rename is atomic but may be lost in a power cut until the folder is
	 * synced (`syncFolder`) or the file system commits on its own.
	 */
	readonly deferFolderSync?: boolean;
	/** Told the revision of what was written (`revisionOf` the new file), before it takes the name. */
	readonly onRevision?: (revision: string) => void;
}

/**
 * A file's revision: its size and modification time (milliseconds with the fraction a double
 * keeps, a fraction of a microsecond). A write through these functions replaces the file by a
 * rename (or a link), which keeps the temporary file's size and modification time, so the revision
 * a writer is told is the one a later `stat` of the name gives until the next write. Not the inode:
 * a copied workspace (`cp -a`) keeps its revisions. (Not the `bigint` stat: it builds four `Date`s
 * per call, a noticeable part of a query that looks at every archive.)
 */
export function revisionOf(stat: Stats): string {
	return `${stat.size}:${stat.mtimeMs}`;
}

/**
 * Random per process, counted per file: unique names without asking the system for randomness per
 * write. `Math.random` (seeded per process by Node from the system's entropy) is enough for a name
 * beside the process id that an exclusive create checks anyway, and a query that writes a cache
 * need not load `node:crypto` for it.
 */
const processHex = Math.floor(Math.random() * 0x100000000)
	.toString(16)
	.padStart(8, "0");
let counter = 0;
function uniqueHex(): string {
	return `${processHex}${(counter++).toString(16)}`;
}

/** The name of a temporary file for `file`, in its folder (`isTemporaryFile` recognises it). */
export function temporaryName(file: string): string {
	return join(dirname(file), `.${basename(file)}.${process.pid}.${uniqueHex()}.tmp`);
}

/** Writes to the same path are queued, so two writes from one process never interleave. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Writes `text` to `file` atomically: a temporary file in the same folder, fsync, rename over the
 * target, fsync of the folder. A crash leaves the old file or the new one, never a torn one; a
 * failed write removes its temporary file.
 */
export function writeFileAtomic(file: string, text: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
	const previous = queues.get(file) ?? Promise.resolve();
	const next = previous.catch(() => undefined).then(() => writeNow(file, text, options));
	queues.set(file, next);
	return next.finally(() => {
		if (queues.get(file) === next) queues.delete(file);
	});
}

/**
 * `writeFileAtomic` of compact JSON with a trailing newline. Compact, not indented: archives are
 * read by programs (`jq` indents them for a person), and indentation made them a third larger
 * and slower to write and to load.
 */
export function writeJsonAtomic(file: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
	return writeFileAtomic(file, jsonBytes(value), options);
}

/** What `createFileAtomic` did. `unsupported`: the file system has no hard links; nothing was made. */
export type CreateOutcome = "created" | "exists" | "unsupported";

/**
 * Makes `file` with `text` only if there is no such file, atomically: a temporary file is written
 * and synced, then hard-linked to the name (`link` fails if the name exists: no rename can
 * replace a file that appeared meanwhile) and its temporary name removed. Either a whole new file
 * appears, or nothing changes (`exists`). The archive writers rely on it: an archive file goes from
 * absent to present only this way, so creating one needs no lock (see `writeArchive`).
 */
export async function createFileAtomic(file: string, text: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<CreateOutcome> {
	const dir = dirname(file);
	const temp = temporaryName(file);
	try {
		await writeTemp(temp, text, options);
		try {
			await fsp.link(temp, file);
		} catch (err) {
			const code = (err as NodeJS.ErrnoException).code;
			if (code === "EEXIST") return "exists";
			if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS" || code === "EMLINK") return "unsupported";
			throw err;
		}
		if (!options.deferFolderSync) await syncFolder(dir);
		return "created";
	} finally {
		// After a link, only a second name of the new file; before it, the whole attempt.
		await fsp.unlink(temp).catch(() => undefined);
	}
}

/**
 * Compact JSON with a trailing newline, as UTF-8. Encoded straight from the text `JSON.stringify`
 * made: appending the newline to the string first made the encoder flatten a copy of every
 * archive's text (a second copy of a megabyte-sized string, in the heap, per write).
 */
export function jsonBytes(value: unknown): Buffer {
	const text = JSON.stringify(value);
	const bytes = Buffer.allocUnsafe(Buffer.byteLength(text) + 1);
	bytes.write(text);
	bytes[bytes.length - 1] = 0x0a;
	return bytes;
}

/** Temporary files are named so that readers of the folder can recognise and skip them. */
export function isTemporaryFile(name: string): boolean {
	return name.startsWith(".") && name.endsWith(".tmp");
}

async function writeNow(file: string, text: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
	const dir = dirname(file);
	const temp = temporaryName(file);
	let renamed = false;
	try {
		await writeTemp(temp, text, options);
		await fsp.rename(temp, file);
		renamed = true;
		if (!options.deferFolderSync) await syncFolder(dir);
	} finally {
		if (!renamed) await fsp.rm(temp, { force: true });
	}
}

/** A new temporary file with `text`, its data synced: ready to become a file's content by rename or link. */
async function writeTemp(temp: string, text: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
	const handle = await fsp.open(temp, "wx", 0o644);
	try {
		await handle.writeFile(text);
		// Data and size, before the rename or link makes them the file's.
		await handle.datasync();
		if (options.onRevision) options.onRevision(revisionOf(await handle.stat()));
	} finally {
		await handle.close();
	}
}

/**
 * Folder syncs in progress, by folder: one running, and at most one queued that every write
 * renamed meanwhile waits for (a group commit). Each write still returns only after a folder
 * sync that began after its rename; eight writes in flight cost two or three syncs, not eight.
 */
const folderSyncs = new Map<string, { readonly running: Promise<void>; queued?: Promise<void> }>();

/** Makes the renames done so far in `dir` durable (see `folderSyncs`). */
export function syncFolder(dir: string): Promise<void> {
	const entry = folderSyncs.get(dir);
	if (entry === undefined) return startFolderSync(dir);
	entry.queued ??= entry.running.then(() => startFolderSync(dir));
	return entry.queued;
}

function startFolderSync(dir: string): Promise<void> {
	const running = fsyncFolder(dir).finally(() => {
		if (folderSyncs.get(dir)?.running === running) folderSyncs.delete(dir);
	});
	folderSyncs.set(dir, { running });
	return running;
}

/** Some file systems refuse to open a folder; that is not an error. */
async function fsyncFolder(dir: string): Promise<void> {
	let handle: FileHandle | undefined;
	try {
		handle = await fsp.open(dir, "r");
		await handle.sync();
	} catch {
		// best effort
	} finally {
		await handle?.close();
	}
}

/**
 * `replaceFileSync` for a file too large to hold in memory: `fill` hands its bytes to `append` a
 * piece at a time (written at once, synchronously), and the file takes the name when `fill` is
 * done. A failure, or a process killed meanwhile, leaves the old file (and, killed, a temporary
 * file `isTemporaryFile` knows).
 */
export async function replaceFileStreamed(file: string, fill: (append: (bytes: Uint8Array) => void) => Promise<void>): Promise<void> {
	const temp = openTemporary(file);
	let written = false;
	try {
		await fill((bytes) => writeAll(temp.fd, bytes));
		written = true;
	} finally {
		temp.finish(written);
	}
}

/**
 * Writes `bytes` to a temporary file beside `file` and renames it over `file`, synchronously and
 * without a sync: for derived files (the text projection, its caches), where a write lost in a
 * power cut is noticed and made again, and a copy into the page cache costs less than a thread-pool
 * round trip. A failed write removes its temporary file.
 */
export function replaceFileSync(file: string, bytes: Uint8Array): void {
	const temp = openTemporary(file);
	let written = false;
	try {
		writeAll(temp.fd, bytes);
		written = true;
	} finally {
		temp.finish(written);
	}
}

/**
 * A new temporary file beside `file` (`temporaryName`), open for writing: `finish(true)` closes it
 * and renames it over `file`; `finish(false)`, or a close or rename that fails, removes it. Shared
 * by the synchronous write and the streamed one (which awaits between pieces).
 */
function openTemporary(file: string): { readonly fd: number; finish(rename: boolean): void } {
	const temp = temporaryName(file);
	const fd = openSync(temp, "wx", 0o644);
	return {
		fd,
		finish(rename) {
			let renamed = false;
			try {
				closeSync(fd);
				if (rename) {
					renameSync(temp, file);
					renamed = true;
				}
			} finally {
				if (!renamed) rmSync(temp, { force: true });
			}
		},
	};
}

function writeAll(fd: number, bytes: Uint8Array): void {
	let done = 0;
	while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
}
