import type { SessionArchive } from "../projections/archive.ts";
import { buildQueryView, type QueryView } from "../projections/queryView.ts";

/** A session's archive as a query read it, with the revision read and its view. */
export interface CachedArchive {
	readonly revision: string;
	readonly archive: SessionArchive;
	readonly view: QueryView;
}

/** Archives kept parsed for the hits shown and for `read` (navigation moves within a few sessions). */
export const ARCHIVE_CACHE_SIZE = 8;

/**
 * A small LRU of parsed archives, by session. A query process would otherwise parse the same
 * archive (up to megabytes of JSON) at every step of a navigation; holding every archive is what
 * the service avoids. An entry is good only for the revision it was read at.
 */
export class ArchiveCache {
	/** Most recently used last (a `Map` keeps insertion order). */
	private readonly entries = new Map<string, CachedArchive>();

	constructor(private readonly capacity = ARCHIVE_CACHE_SIZE) {}

	/** The archive read at this revision, if kept (and now the most recently used). */
	get(sessionId: string, revision: string | undefined): CachedArchive | undefined {
		const cached = this.entries.get(sessionId);
		if (!cached || cached.revision !== revision) return undefined;
		this.entries.delete(sessionId);
		this.entries.set(sessionId, cached);
		return cached;
	}

	/**
	 * Keeps an archive read (or written) at a revision, dropping the least recently used beyond the
	 * capacity. Its view is made when first asked for: every live write of the current session puts
	 * its archive here (≈ 17 ms for a 30 MB session's view), and most are never read.
	 */
	put(sessionId: string, revision: string, archive: SessionArchive): CachedArchive {
		let view: QueryView | undefined;
		const entry: CachedArchive = {
			revision,
			archive,
			get view() {
				view ??= buildQueryView({ sessions: { [sessionId]: archive } });
				return view;
			},
		};
		this.entries.delete(sessionId);
		this.entries.set(sessionId, entry);
		if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
		return entry;
	}

	get size(): number {
		return this.entries.size;
	}
}
