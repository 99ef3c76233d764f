import type { ArchiveState, SessionArchive } from "../projections/archive.ts";

/**
 * The archives a service holds in memory, by session: the workspace as a `Map` (adding a session
 * costs nothing, where a new record per change copied every other session), each archive itself
 * immutable (the reducer's output).
 *
 * Some are held only until their write has them: before `load`, an ingest's archive is needed
 * only by its write, so it goes as that write starts (see `releaseWritten`) instead of keeping the
 * whole history in memory. The rest are held for good.
 */
export class HeldArchives {
	private readonly archives = new Map<string, SessionArchive>();
	/** Held only until written (an ingest's, before `load`). */
	private readonly untilWritten = new Set<string>();
	/** The record `state()` made, until the next change. */
	private snapshot: ArchiveState | undefined;

	get(sessionId: string): SessionArchive | undefined {
		return this.archives.get(sessionId);
	}

	has(sessionId: string): boolean {
		return this.archives.has(sessionId);
	}

	/** Every archive in memory, those held until written included. */
	get size(): number {
		return this.archives.size;
	}

	/** Holds an archive for good. */
	hold(sessionId: string, archive: SessionArchive): void {
		if (this.untilWritten.delete(sessionId)) this.snapshot = undefined;
		this.set(sessionId, archive);
	}

	/** Holds an archive only until its write starts (see `releaseWritten`). */
	holdUntilWritten(sessionId: string, archive: SessionArchive): void {
		this.untilWritten.add(sessionId);
		this.set(sessionId, archive);
	}

	/** Replaces a held archive with its next state, held as it was. */
	update(sessionId: string, archive: SessionArchive): void {
		this.set(sessionId, archive);
	}

	/** Holds for good an archive held until written (something other than its write needs it now). */
	keep(sessionId: string): void {
		if (this.untilWritten.delete(sessionId)) this.snapshot = undefined;
	}

	/** Holds for good every archive held (after `load`, every archive is). */
	keepAll(): void {
		this.untilWritten.clear();
		this.snapshot = undefined;
	}

	/** As a write of this archive starts: lets it go if it was held only for that write. Whether it did. */
	releaseWritten(sessionId: string, archive: SessionArchive): boolean {
		if (!this.untilWritten.has(sessionId) || this.archives.get(sessionId) !== archive) return false;
		this.untilWritten.delete(sessionId);
		this.archives.delete(sessionId);
		return true;
	}

	/**
	 * The archives held for good, as the record the query and summary modules read. The same object
	 * until something changes (a query view made from it is reused while it is current).
	 */
	state(): ArchiveState {
		if (this.snapshot) return this.snapshot;
		const sessions: Record<string, SessionArchive> = {};
		for (const [id, archive] of this.archives) if (!this.untilWritten.has(id)) sessions[id] = archive;
		this.snapshot = { sessions };
		return this.snapshot;
	}

	private set(sessionId: string, archive: SessionArchive): void {
		if (this.archives.get(sessionId) === archive) return;
		this.archives.set(sessionId, archive);
		if (!this.untilWritten.has(sessionId)) this.snapshot = undefined;
	}
}
