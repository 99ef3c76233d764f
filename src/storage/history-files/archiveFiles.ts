/**
 * Where session archives are (the history folder, one `<sessionId>.json` per session), which there
 * are, and reading them: parsed and upcast, with the repairs a read makes under the archive's lock
 * (a damaged file moved aside, legacy path fields dropped). Writing them is `archiveWrites.ts`.
 */
import { readdirSync, promises as fsp } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, type SessionArchive } from "../../services/history/projections/archive.ts";
import { isValidId } from "../../services/history/model/ids.ts";
import { ArchiveError, upcastArchive, type UpcastResult } from "./archiveShape.ts";
import { lockPathOf, withFileLock, type FileLockOptions } from "./fileLock.ts";
import { checkPbotFolder } from "./paths.ts";
import { stampOfStats, type WrittenArchives } from "./writtenArchives.ts";
import { leadingMembers, parseJsonInPieces } from "./jsonInPieces.ts";
import { ReusedBuffer } from "../../services/history/model/reusedBuffer.ts";
import { readRegularFile, readRegularFileStamped } from "./regularFile.ts";
import { isTemporaryFile, revisionOf, writeJsonAtomic } from "./writeJsonAtomic.ts";

export { ArchiveError, type ArchiveErrorCode } from "./archiveShape.ts";

/**
 * What archives are read into: each is parsed right after its read (synchronously, into strings
 * of its own: nothing keeps the bytes), so one buffer serves every read. Up to 16 MB is kept.
 */
const archiveReads = new ReusedBuffer(16 * 1024 * 1024);

/** The only folder pbot writes to, relative to the workspace. */
export const PBOT_DIR = join(".pi", "pbot");
export const HISTORY_DIR = join(PBOT_DIR, "history");

/** Longest id accepted as a file name stem (see `isValidId`). */
const SHOWN_ID_CHARS = 80;

export function historyDir(workspace: string): string {
	return join(resolve(workspace), HISTORY_DIR);
}

/**
 * The archive file of a session. The id is checked before any name is built from it: only
 * `[A-Za-z0-9_-]{1,128}` (not `-` or `_` alone), so no `..`, separator, NUL or empty name can
 * reach the file system.
 */
export function archivePath(workspace: string, sessionId: string): string {
	if (typeof sessionId !== "string" || !isValidId(sessionId)) {
		const shown = typeof sessionId === "string" ? JSON.stringify(sessionId.slice(0, SHOWN_ID_CHARS)) : String(sessionId);
		throw new ArchiveError(`invalid session id ${shown}: ids are 1–128 of A–Z a–z 0–9 _ -`, "id");
	}
	return join(historyDir(workspace), `${sessionId}.json`);
}

/** Session ids that have an archive in the workspace. */
export async function listArchiveIds(workspace: string): Promise<string[]> {
	let names: string[];
	checkHistoryFolder(workspace);
	try {
		// Synchronous, as session folders are listed (`listSessionFiles`): a thread-pool round trip costs more.
		names = readdirSync(historyDir(workspace));
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
		throw err;
	}
	return names
		.filter((n) => n.endsWith(".json") && !isTemporaryFile(n))
		.map((n) => n.slice(0, -".json".length))
		.filter(isValidId)
		.sort();
}

/** `.pi/pbot` and its `history/` are real folders inside the workspace (`checkPbotFolder`): what every listing checks first. */
export function checkHistoryFolder(workspace: string): void {
	const dir = historyDir(workspace);
	checkPbotFolder(dirname(dir), dir);
}

/** Reads an archive; `undefined` when there is none. A damaged one is an `ArchiveError`. */
export async function readArchive(workspace: string, sessionId: string): Promise<SessionArchive | undefined> {
	try {
		return (await readArchiveFile(archivePath(workspace, sessionId), sessionId))?.archive;
	} catch (err) {
		throw await quarantined(workspace, sessionId, err);
	}
}

/**
 * After reading a damaged archive (cut short, not JSON, a wrong shape): moves it aside as
 * `<id>.json.damaged-<time>` (its bytes kept for a person), under its lock and only if it is still
 * damaged then (a writer may have replaced it meanwhile), so the session is extracted again from
 * its native file. Returns the error to throw: the same, or one saying where the bytes went.
 */
async function quarantined(workspace: string, sessionId: string, err: unknown, options: ArchiveFileOptions = {}): Promise<unknown> {
	if (!(err instanceof ArchiveError) || err.code !== "damaged") return err;
	const file = archivePath(workspace, sessionId);
	try {
		const aside = await withFileLock(
			lockPathOf(file),
			async () => {
				try {
					await readArchiveFile(file, sessionId);
					return undefined; // readable now: replaced meanwhile
				} catch (again) {
					if (!(again instanceof ArchiveError) || again.code !== "damaged") return undefined;
				}
				const name = `${file}.damaged-${Date.now()}`;
				await fsp.rename(file, name);
				options.written?.forget(file);
				return name;
			},
			options.lock,
		);
		return aside === undefined
			? err
			: new ArchiveError(
					`${err.message}; its bytes are kept as ${basename(aside)} and the session is extracted again from its session file, where there is one`,
					"damaged",
					aside,
				);
	} catch {
		return err; // could not move it (a read-only folder): reported as it is
	}
}

/**
 * Reads an archive with the revision of exactly the bytes read (one open: an archive is replaced
 * by a rename, so what the descriptor reads is what its `stat` describes). An archive still holding
 * a legacy path field is cleaned first, as `readArchiveCleaning` does.
 */
export async function readArchiveWithRevision(
	workspace: string,
	sessionId: string,
	options: ArchiveFileOptions = {},
): Promise<{ archive: SessionArchive; revision: string } | undefined> {
	const file = archivePath(workspace, sessionId);
	for (let attempt = 0; ; attempt++) {
		const read = readRegularFile(file, { into: archiveReads });
		if (!read) return undefined;
		let parsed: UpcastResult;
		try {
			parsed = parseArchiveJson(read.bytes, sessionId);
		} catch (err) {
			throw await quarantined(workspace, sessionId, err, options);
		}
		if (parsed.legacyFields.length > 0 && attempt === 0) {
			await dropLegacyFields(workspace, sessionId, options);
			continue;
		}
		return { archive: parsed.archive, revision: revisionOf(read.stat) };
	}
}

/** How much of an archive `readArchiveParent` reads: its `session` comes third, after its format and version. */
const SESSION_PREFIX_BYTES = 4096;

/**
 * The session an archive names as its parent (`session.parentSessionId`), from the archive's first
 * bytes without parsing the rest: `null` for none; `undefined` when they do not tell (no archive,
 * another format or version, `session` not among the first members, anything unusual). What the
 * text projection asks of archives it is about to project (`ArchiveStore.parentOf`).
 */
export function readArchiveParent(workspace: string, sessionId: string): string | null | undefined {
	try {
		const read = readRegularFile(archivePath(workspace, sessionId), { length: SESSION_PREFIX_BYTES, into: archiveReads });
		const members = read && leadingMembers(read.bytes, "session");
		if (members?.format !== ARCHIVE_FORMAT || members.version !== ARCHIVE_VERSION) return undefined;
		const session = members.session as { readonly sessionId?: unknown; readonly parentSessionId?: unknown } | null | undefined;
		if (typeof session !== "object" || session === null || session.sessionId !== sessionId) return undefined;
		const parent = session.parentSessionId;
		return parent === undefined ? null : typeof parent === "string" ? parent : undefined;
	} catch {
		// Not a regular file, unreadable: the archive's own read says so.
		return undefined;
	}
}

/** Reads and upcasts an archive file, saying which legacy fields it had. */
export async function readArchiveFile(file: string, sessionId: string): Promise<UpcastResult | undefined> {
	// Never through a link, never waiting on a FIFO: a `NotRegularFileError` says what is there.
	const read = readRegularFile(file, { into: archiveReads });
	return read === undefined ? undefined : parseArchiveJson(read.bytes, sessionId);
}

/** Parses and upcasts an archive's JSON (its text, or its file's bytes). */
export function parseArchive(json: string | Uint8Array, expectedId?: string): SessionArchive {
	return parseArchiveJson(json, expectedId).archive;
}

/** From bytes, parsed a Q&A at a time (`parseJsonInPieces`): never one string of the whole archive. */
export function parseArchiveJson(json: string | Uint8Array, expectedId?: string): UpcastResult {
	let value: unknown;
	try {
		value = typeof json === "string" ? JSON.parse(json) : parseJsonInPieces(json);
	} catch (err) {
		throw new ArchiveError(`archive ${expectedId ?? ""} is not valid JSON: ${(err as Error).message}`);
	}
	return upcastArchive(value, expectedId !== undefined ? { expectedId } : {});
}

/** What a read that may repair an archive (under its lock) needs; `WriteArchiveOptions` adds what a write needs. */
export interface ArchiveFileOptions {
	/** Lock timing (tests shorten it). */
	readonly lock?: FileLockOptions;
	/** What this store last wrote (see `WrittenArchives`); without it, a merge always reads the stored archive first. */
	readonly written?: WrittenArchives;
}

/**
 * Rewrites an archive without its legacy path fields (`file`, `cwd`, …), keeping everything else:
 * Q&A, summaries and ids. Done under the lock, on the archive as it is then. Whether the native
 * session file still exists plays no part.
 */
export async function dropLegacyFields(workspace: string, sessionId: string, options: ArchiveFileOptions = {}): Promise<boolean> {
	const file = archivePath(workspace, sessionId);
	return withFileLock(
		lockPathOf(file),
		async () => {
			const read = await readArchiveFile(file, sessionId);
			if (!read || read.legacyFields.length === 0) return false;
			await writeJsonAtomic(file, read.archive);
			options.written?.remember(file, read.archive);
			return true;
		},
		options.lock,
	);
}

/**
 * Reads an archive and, when it still has legacy path fields, rewrites it without them first
 * (on load, workspace archives lose their `file` field: docs/archive-format.md, "Older shapes").
 */
export async function readArchiveCleaning(workspace: string, sessionId: string, options: ArchiveFileOptions = {}): Promise<SessionArchive | undefined> {
	const file = archivePath(workspace, sessionId);
	const read = readRegularFileStamped(file, archiveReads);
	if (!read) return undefined;
	const parsed = parseArchiveJson(read.bytes, sessionId);
	if (parsed.legacyFields.length > 0) await dropLegacyFields(workspace, sessionId, options);
	// What was read, as of the descriptor it was read through: a write that finds the file so merges with it without reading it again.
	else options.written?.remember(file, parsed.archive, stampOfStats(read.stat));
	return parsed.archive;
}
