import type { SessionArchive } from "../../services/history/projections/archive.ts";
import { mergeArchives } from "../../services/history/projections/mergeArchives.ts";
import type { ArchiveStore } from "../../services/history/service/ports.ts";
import { statSync } from "node:fs";
import { archivePath, listArchiveIds, readArchiveCleaning, readArchiveParent, readArchiveWithRevision } from "./archiveFiles.ts";
import { syncHistoryFolder, writeArchive, type WriteArchiveOptions } from "./archiveWrites.ts";
import { archiveRevisions, cachedArchiveRevisions, type ListingMemo, settledArchiveListing } from "./archiveRevisions.ts";
import { sweepLeftovers } from "./leftovers.ts";
import { readArchiveTexts } from "./archiveTexts.ts";
import { WrittenArchives } from "./writtenArchives.ts";
import { revisionOf } from "./writeJsonAtomic.ts";

/**
 * The workspace's `.pi/pbot/history/` as an archive store.
 * - `list` first removes what killed writers left behind (temporary files, stale-lock asides);
 * - `read` rewrites an archive that still has a legacy path field (`file`, …) without it;
 * - `write` merges with what another process may have stored meanwhile, under a lock file.
 */
export function workspaceArchiveStore(workspace: string, given: WriteArchiveOptions = {}): ArchiveStore {
	// What this store last wrote: its own, so a store never trusts another store's memory of a file.
	const options: WriteArchiveOptions = { ...given, written: given.written ?? new WrittenArchives() };
	let swept = false;
	const listings: ListingMemo = {};
	return {
		list: async () => {
			if (!swept) {
				swept = true;
				// A folder still since a listing that found nothing to sweep: its ids as that listing
				// took them (no second listing of a folder that holds one file per session).
				const listing = settledArchiveListing(workspace, listings);
				if (listing && !listing.leftovers) return [...listing.revisions.keys()].sort();
				await sweepLeftovers(workspace);
			}
			return listArchiveIds(workspace);
		},
		read: (sessionId) => readArchiveCleaning(workspace, sessionId, options),
		// Not an async function: one would keep its parameters (the whole archive) until the write
		// lands, while `writeArchive` itself keeps only the bytes of a new one.
		write: (archive, writeOptions) =>
			writeArchive(workspace, archive, {
				...options,
				...(writeOptions?.deferDurability ? { deferDurability: true } : {}),
				...(writeOptions?.jsonCache ? { jsonCache: writeOptions.jsonCache } : {}),
			}),
		sync: () => syncHistoryFolder(workspace),
		revisions: async (revisionOptions) => (revisionOptions?.fresh ? archiveRevisions(workspace) : cachedArchiveRevisions(workspace, listings)),
		readWithRevision: (sessionId) => readArchiveWithRevision(workspace, sessionId, options),
		readTexts: (sessionId, arena) => readArchiveTexts(workspace, sessionId, arena),
		revisionOf: (sessionId) => {
			const stat = statSync(archivePath(workspace, sessionId), { throwIfNoEntry: false });
			return stat ? revisionOf(stat) : undefined;
		},
		parentOf: async (sessionId) => readArchiveParent(workspace, sessionId),
	};
}

/**
 * An archive store in memory, for tests and dry runs. Archives are copied in and out as a file
 * would be, and a write merges with what is stored, as the workspace store does.
 */
export function memoryArchiveStore(initial: Iterable<SessionArchive> = []): ArchiveStore & { readonly writes: number } {
	const files = new Map<string, string>();
	/** Revisions: the store's own write counter at each archive's last change. */
	const revisions = new Map<string, string>();
	for (const a of initial) {
		files.set(a.session.sessionId, JSON.stringify(a));
		revisions.set(a.session.sessionId, "0");
	}
	let writes = 0;
	return {
		get writes() {
			return writes;
		},
		list: async () => [...files.keys()].sort(),
		read: async (id) => {
			const text = files.get(id);
			return text === undefined ? undefined : (JSON.parse(text) as SessionArchive);
		},
		write: async (archive) => {
			writes++;
			const id = archive.session.sessionId;
			const text = files.get(id);
			const merged = text === undefined ? archive : mergeArchives(JSON.parse(text) as SessionArchive, archive);
			const json = JSON.stringify(merged);
			if (json !== text) revisions.set(id, String(writes));
			files.set(id, json);
			const revision = revisions.get(id) as string;
			return json === JSON.stringify(archive) ? { revision } : { revision, archive: JSON.parse(json) as SessionArchive };
		},
		revisions: async () => new Map(revisions),
		readWithRevision: async (id) => {
			const text = files.get(id);
			return text === undefined ? undefined : { archive: JSON.parse(text) as SessionArchive, revision: revisions.get(id) as string };
		},
		parentOf: async (id) => {
			const text = files.get(id);
			return text === undefined ? undefined : ((JSON.parse(text) as SessionArchive).session.parentSessionId ?? null);
		},
	};
}
