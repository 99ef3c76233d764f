/**
 * Writing session archives: a new archive made by a hard link (no lock), an existing one merged with
 * what is stored under its lock, and the folder sync that makes deferred writes durable. Where
 * archives are and how they are read (with the repairs a read makes) is `archiveFiles.ts`.
 */
import { lstatSync, promises as fsp } from "node:fs";
import { dirname } from "node:path";
import type { SessionArchive } from "../../services/history/projections/archive.ts";
import type { ArchiveWritten } from "../../services/history/service/ports.ts";
import { deepEqual } from "../../services/history/model/deepEqual.ts";
import { mergeArchives } from "../../services/history/projections/mergeArchives.ts";
import { loopTurn } from "../../services/history/service/timeSlice.ts";
import { type ArchiveFileOptions, archivePath, historyDir, parseArchive, readArchiveFile } from "./archiveFiles.ts";
import { type ArchiveJsonCache, archiveJsonBytes } from "./archiveJson.ts";
import { ArchiveError } from "./archiveShape.ts";
import { lockPathOf, withFileLock } from "./fileLock.ts";
import { makePbotFolder } from "./paths.ts";
import { stampOf, type WrittenArchives } from "./writtenArchives.ts";
import { createFileAtomic, jsonBytes, revisionOf, syncFolder, writeFileAtomic, type AtomicWriteOptions, type CreateOutcome } from "./writeJsonAtomic.ts";

export interface WriteArchiveOptions extends ArchiveFileOptions {
	/** See `ArchiveWriteOptions.deferDurability`: durable at the next `syncHistoryFolder`. */
	readonly deferDurability?: boolean;
	/** See `ArchiveWriteOptions.jsonCache` (`archiveJsonBytes`). */
	readonly jsonCache?: ArchiveJsonCache;
}

/**
 * Writes a session's archive, merged with what is on disk: under the archive's lock file, the
 * stored archive is read again, merged with this one (`mergeArchives`: union of nodes and
 * summaries, nothing another process stored is lost), and written atomically. A stored archive
 * that cannot be parsed is kept beside as `<id>.json.damaged-<time>` and replaced; one of a newer
 * format version is never overwritten (an `ArchiveError`).
 *
 * An archive that does not exist yet (every write of a cold ingest) is made without the lock: an
 * archive file goes from absent to present only by `createFileAtomic` (a hard link, which fails
 * if the name exists), by lock-free creators and lock holders alike, so neither can replace the
 * other's file; whoever finds it made meanwhile merges under the lock. A lock file per archive
 * was two more files made and removed per write: on ext4 every new file scans past the inodes
 * removed in the last minutes, and a cold ingest spent a tenth of its time there. Such a write
 * holds the archive's bytes, not the archive: encoded at the call, the objects can go while the
 * write waits on the disk (a cold ingest's writes in flight otherwise outlived young-generation
 * collections and were promoted, a megabyte at each).
 */
export async function writeArchive(workspace: string, archive: SessionArchive, options: WriteArchiveOptions = {}): Promise<ArchiveWritten> {
	const dir = historyDir(workspace);
	const file = archivePath(workspace, archive.session.sessionId);
	if (stampOf(file) === undefined && !withoutLinks.has(dir))
		return createArchive(workspace, archive.session.sessionId, archiveJsonBytes(archive, options.jsonCache), options);
	return mergeArchive(workspace, archive, options);
}

/**
 * Makes a session's archive only if it has none, as `writeArchive` makes a new one; where the file
 * system has no hard links, by rename — so the caller holds the archive's lock (migration does).
 * Says whether it made it.
 */
export async function createArchiveHoldingLock(workspace: string, archive: SessionArchive): Promise<boolean> {
	const dir = historyDir(workspace);
	const file = archivePath(workspace, archive.session.sessionId);
	if (stampOf(file) !== undefined) return false;
	return (await inFolder(dir, () => create(dir, file, jsonBytes(archive), { deferFolderSync: false }, true))) === "created";
}

/** A new archive from its bytes; when one was made meanwhile (or links are not supported here), merged under the lock. */
async function createArchive(workspace: string, sessionId: string, bytes: Buffer, options: WriteArchiveOptions): Promise<ArchiveWritten> {
	const dir = historyDir(workspace);
	const file = archivePath(workspace, sessionId);
	let revision = "";
	const outcome = await inFolder(dir, () =>
		create(
			dir,
			file,
			bytes,
			atomicOf(options, (r) => (revision = r)),
		),
	);
	if (outcome === "created") return { revision };
	// Merged with the one made meanwhile: what is stored is not what was given.
	const given = parseArchive(bytes, sessionId);
	const written = await mergeArchive(workspace, given, options);
	return { revision: written.revision, archive: written.archive ?? given };
}

/** The read–merge–write under the archive's lock. Says what is stored when it differs from `archive`. */
function mergeArchive(workspace: string, archive: SessionArchive, options: WriteArchiveOptions): Promise<ArchiveWritten> {
	const sessionId = archive.session.sessionId;
	const file = archivePath(workspace, sessionId);
	const dir = historyDir(workspace);
	let revision = "";
	const atomic = atomicOf(options, (r) => (revision = r));
	return inFolder(dir, () =>
		withFileLock(
			lockPathOf(file),
			async () => {
				for (let attempt = 0; ; attempt++) {
					// Bounded: each retry means another writer made the file meanwhile, which cannot
					// happen more than once or twice under the lock (a link in the way is refused below).
					if (attempt >= MAX_MERGE_ATTEMPTS)
						throw new ArchiveError(`archive ${sessionId}: made and replaced by others ${attempt} times while merging; not written`);
					const stored = await readStoredForMerge(file, sessionId, options.written);
					const merged = stored ? mergeArchives(stored, archive) : archive;
					if (!stored) {
						// Made as a lock-free writer would make it; one that won meanwhile is merged with.
						if ((await create(dir, file, archiveJsonBytes(merged, options.jsonCache), atomic, true)) === "exists") continue;
					} else if (!deepEqual(stored, merged)) await writeFileAtomic(file, archiveJsonBytes(merged, options.jsonCache), atomic);
					else revision = stampRevision(file);
					options.written?.remember(file, merged);
					return merged === archive || deepEqual(merged, archive) ? { revision } : { revision, archive: merged };
				}
			},
			options.lock,
		),
	);
}

/** The revision of the file at `file` now (called holding its lock). */
function stampRevision(file: string): string {
	const s = lstatSync(file, { throwIfNoEntry: false });
	return s ? revisionOf(s) : "";
}

/** Times a merge reads, merges and writes before it gives up (see `mergeArchive`). */
const MAX_MERGE_ATTEMPTS = 8;

function atomicOf(options: WriteArchiveOptions, onRevision?: (revision: string) => void): AtomicWriteOptions {
	return { deferFolderSync: options.deferDurability === true, ...(onRevision ? { onRevision } : {}) };
}

/** Runs `write` with the history folder made; when the folder was removed meanwhile (a person, a test), makes it again and runs it once more. */
async function inFolder<T>(dir: string, write: () => Promise<T>): Promise<T> {
	ensureFolder(dir);
	try {
		return await write();
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
		madeFolders.delete(dir);
		ensureFolder(dir);
		return write();
	}
}

/** Folders whose file system has no hard links: there, archives are made under the lock only. */
const withoutLinks = new Set<string>();

/**
 * Makes an archive file that does not exist (`createFileAtomic`). Where the file system has no
 * hard links nothing can be made without the lock: `unsupported` then, and a lock holder (the only
 * kind of creator there) renames instead. It does not `remember` what it made: without the lock,
 * another writer may have replaced the file by the time its stamp is taken (a lock holder
 * remembers it itself).
 */
async function create(dir: string, file: string, bytes: Uint8Array, atomic: AtomicWriteOptions, locked = false): Promise<CreateOutcome> {
	const outcome = withoutLinks.has(dir) ? "unsupported" : await createFileAtomic(file, bytes, atomic);
	if (outcome === "unsupported") withoutLinks.add(dir);
	if (outcome === "unsupported" && locked) {
		await writeFileAtomic(file, bytes, atomic);
		return "created";
	}
	return outcome;
}

/** Makes the archive writes done so far durable (one folder sync). */
export function syncHistoryFolder(workspace: string): Promise<void> {
	return syncFolder(historyDir(workspace));
}

/** Folders this process made sure exist (one `mkdir` per folder, not one per write). */
const madeFolders = new Set<string>();

function ensureFolder(dir: string): void {
	if (madeFolders.has(dir)) return;
	makePbotFolder(dirname(dir), dir);
	madeFolders.add(dir);
}

/** The stored archive to merge with: the one this store wrote if the file is unchanged since, else read. */
async function readStoredForMerge(file: string, sessionId: string, written: WrittenArchives | undefined): Promise<SessionArchive | undefined> {
	const stamp = stampOf(file);
	if (stamp === undefined) return undefined; // nothing stored yet (a cold ingest's every write)
	const known = written?.known(file, stamp);
	if (known) return known;
	try {
		const read = (await readArchiveFile(file, sessionId))?.archive;
		// Reading and parsing a large archive takes tens of milliseconds, and merging and encoding it
		// as many again: the event loop turns between them (Pi's input while a live write runs; the
		// first one after Pi starts reads the archive another process wrote).
		await loopTurn();
		return read;
	} catch (err) {
		if (!(err instanceof ArchiveError) || err.code !== "damaged") throw err;
		// Damaged beyond reading: keep its bytes for a person, write the new archive.
		await fsp.rename(file, `${file}.damaged-${Date.now()}`);
		return undefined;
	}
}
