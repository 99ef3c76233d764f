import { type BigIntStats, lstatSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { isValidId } from "../../services/history/model/ids.ts";
import { checkHistoryFolder, historyDir } from "./archiveFiles.ts";
import { checkPbotFolder } from "./paths.ts";
import { entryKind, readRegularText } from "./regularFile.ts";
import { isLeftoverName } from "./leftovers.ts";
import { isTemporaryFile, replaceFileSync, revisionOf } from "./writeJsonAtomic.ts";

/**
 * The archives of the history folder as one listing tells them: each one's revision
 * (`revisionOf`: size and modification time) by session id, and whether the folder holds names
 * the leftover sweep looks at (`isLeftoverName`: what killed writers leave).
 */
export interface ArchiveListing {
	readonly revisions: Map<string, string>;
	readonly leftovers: boolean;
}

/**
 * The revision of every archive in the workspace, by session id: a listing and a `stat` per
 * archive. What the text projection is checked against.
 */
export function archiveRevisions(workspace: string): Map<string, string> {
	return archiveListing(workspace).revisions;
}

function archiveListing(workspace: string): ArchiveListing {
	const dir = historyDir(workspace);
	let names: string[];
	checkHistoryFolder(workspace);
	try {
		names = readdirSync(dir);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return { revisions: new Map(), leftovers: false };
		throw err;
	}
	const revisions = new Map<string, string>();
	let leftovers = false;
	for (const name of names) {
		if (isLeftoverName(name)) leftovers = true;
		if (!name.endsWith(".json") || isTemporaryFile(name)) continue;
		const id = name.slice(0, -".json".length);
		if (!isValidId(id)) continue;
		// Not following links: a link or a FIFO named like an archive gets a revision no projection
		// has, so the catch-up tries to read it and says why it cannot (never hidden, never waited on).
		const s = lstatSync(join(dir, name), { throwIfNoEntry: false });
		if (s) revisions.set(id, s.isFile() ? revisionOf(s) : `not-a-file:${s.mtimeMs}`);
	}
	return { revisions, leftovers };
}

/** What a store keeps of the last listing it took, for as long as the folder's stamp stays (`listingAt`). */
export interface ListingMemo {
	last?: { readonly stamp: string; readonly listing: ArchiveListing };
}

/**
 * `listingAt` when the history folder has been still (its stamp vouches for a listing,
 * cached or taken now and kept in `memo`), else `undefined`: what a caller that needs only the ids
 * asks, so that a folder written in the last seconds is not listed with a `stat` per archive twice
 * (here, and again by the catch-up, which cannot keep it).
 */
export function settledArchiveListing(workspace: string, memo?: ListingMemo): ArchiveListing | undefined {
	const dir = historyDir(workspace);
	const before = folderStamp(dir);
	return before === undefined ? undefined : listingAt(workspace, dir, before, memo);
}

/**
 * `archiveRevisions` (and whether there are leftovers), without a `stat` per archive when the
 * history folder has not changed since they were last taken. Every way pbot changes an archive (a
 * temporary file renamed or linked in, a lock made and removed, a damaged one moved aside) changes
 * the folder's modification time, so an unchanged folder (same inode and nanosecond time) means
 * unchanged archives — for pbot's writers. A file changed in place by hand shows only in its own
 * `stat`: `ingest` asks for fresh revisions, and `read` reads the archive itself. The listing is
 * kept in `.pi/pbot/text/archives.cache` (derived, beside the projection), and only when the folder
 * had been still for `SETTLED_MS` before it was taken: within the file system's clock tick after a
 * write, a second write could leave the folder's time as it was (the reasoning of git's "racy"
 * index); `before` is its stamp (`folderStamp`), `undefined` when it was not still. `memo`: a store's own, so that the listing a query takes first (its archive ids) serves
 * its catch-up too, the folder's stamp taken again.
 */
function listingAt(workspace: string, dir: string, before: string | undefined, memo: ListingMemo | undefined): ArchiveListing {
	if (before !== undefined && memo?.last?.stamp === before) {
		checkHistoryFolder(workspace);
		return memo.last.listing;
	}
	const cacheFile = join(dirname(dir), "text", ARCHIVES_CACHE);
	const remember = (listing: ArchiveListing): ArchiveListing => {
		if (memo && before !== undefined) memo.last = { stamp: before, listing };
		return listing;
	};
	if (before !== undefined) {
		try {
			const cached = readRegularText(cacheFile);
			if (cached !== undefined) {
				const value = JSON.parse(cached) as { stamp?: unknown; revisions?: unknown; leftovers?: unknown };
				// (One kept before it said whether there are leftovers is taken again, once, to say so.)
				if (value.stamp === before && typeof value.revisions === "object" && value.revisions !== null && typeof value.leftovers === "boolean") {
					checkHistoryFolder(workspace);
					const revisions = new Map(Object.entries(value.revisions as Record<string, string>).filter(([id, r]) => isValidId(id) && typeof r === "string"));
					return remember({ revisions, leftovers: value.leftovers });
				}
			}
		} catch {
			// a damaged or foreign cache: the archives are looked at
		}
	}
	const listing = archiveListing(workspace);
	// Kept only when the folder was still before and did not change while it was read.
	if (before !== undefined && folderStamp(dir) === before) {
		try {
			checkPbotFolder(dirname(dir), dirname(cacheFile));
			if (entryKind(dirname(cacheFile)) === "a folder")
				replaceFileSync(
					cacheFile,
					Buffer.from(JSON.stringify({ stamp: before, revisions: Object.fromEntries(listing.revisions), leftovers: listing.leftovers })),
				);
		} catch {
			// a cache: the next process looks at the archives again
		}
		return remember(listing);
	}
	return listing;
}

/** `archiveRevisions`, from the cache or the memo while the history folder is as it was (`listingAt`). */
export function cachedArchiveRevisions(workspace: string, memo?: ListingMemo): Map<string, string> {
	const dir = historyDir(workspace);
	return listingAt(workspace, dir, folderStamp(dir), memo).revisions;
}

const ARCHIVES_CACHE = "archives.cache";
/** How long the history folder must have been unchanged for its time to vouch for its archives. */
const SETTLED_MS = 2000;

/** The history folder's inode and modification time, when it has been still for `SETTLED_MS`; else `undefined`. */
function folderStamp(dir: string): string | undefined {
	let s: BigIntStats | undefined;
	try {
		s = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
	} catch {
		return undefined; // (`.pi` a file: the listing's check says so)
	}
	if (!s?.isDirectory()) return undefined;
	if (Date.now() - Number(s.mtimeMs) < SETTLED_MS) return undefined;
	return `${s.ino}:${s.mtimeNs}`;
}
