import type { HistoryEvent } from "../model/events.ts";
import { isValidId } from "../model/ids.ts";
import { eventsBySession, evolveSession, type SessionArchive } from "../projections/archive.ts";
import { mergeArchives } from "../projections/mergeArchives.ts";
import { HeldArchives } from "./heldArchives.ts";
import { mapLimit } from "./ingestRun.ts";
import type { ArchiveStore, SourceCheckpoint } from "./ports.ts";

/** Archives read at once by `loadAll`. */
const LOAD_CONCURRENCY = 4;

/**
 * The archives a service knows of: those held in memory (`held`) and the ids of those in the
 * store (listed once per process, then kept up to date by this process's writes). Reading from
 * the store happens here; what to hold and when is the service's call.
 */
export class WorkspaceArchives {
	readonly held = new HeldArchives();
	private stored: Set<string> | undefined;
	/** The stored revision each held archive was read at or last written as (what `catchUpHeld` compares with). */
	private readonly revisions = new Map<string, string>();

	/** `warn`: an archive that could not be read; `unreadable`: the same, for the repairs. */
	constructor(
		private readonly store: ArchiveStore,
		private readonly warn: (message: string) => void,
		private readonly unreadable: (sessionId: string, err: Error) => void,
	) {}

	/** The ids of the stored archives (listed once per process). */
	async storedIds(): Promise<Set<string>> {
		this.stored ??= new Set(await this.store.list());
		return this.stored;
	}

	/**
	 * Whether archives this process knew of are gone from the store (`.pi/pbot/history` deleted or
	 * emptied under it); the stored ids are listed again then. From the store's revisions, which it
	 * keeps while the folder is unchanged: a `stat` a query.
	 */
	async anyGone(): Promise<boolean> {
		const now = await this.store.revisions?.();
		if (!now || !this.stored) return false;
		for (const id of this.stored)
			if (!now.has(id)) {
				await this.relist();
				return true;
			}
		return false;
	}

	/** Lists the stored archives again (another process may have written some since). */
	async relist(): Promise<void> {
		this.stored = new Set(await this.store.list());
	}

	/**
	 * Brings a held archive up to date with the stored one, which another process may have written
	 * since this one read it (summaries it made): merged as a write merges. An unreadable stored
	 * archive leaves the held one as it is (reported).
	 */
	async catchUpHeld(sessionId: string, warnings: string[]): Promise<void> {
		const held = this.held.get(sessionId);
		if (!held) return;
		// Unchanged since this process read or wrote it (a `stat`): nothing to take. A pass over a long
		// session read its archive again at every claim (≈ 100 ms for a 30 MB session).
		const now = this.store.revisionOf?.(sessionId);
		if (now !== undefined && now === this.revisions.get(sessionId)) return;
		let stored: SessionArchive | undefined;
		try {
			stored = await this.readRecording(sessionId);
		} catch (err) {
			warnings.push(`archive ${sessionId}: ${(err as Error).message}`);
			return;
		}
		if (!stored) return;
		this.stored?.add(sessionId);
		// (Called in the service's turn: the held archive is the same after the read.)
		const merged = mergeArchives(stored, held);
		if (merged !== held) this.held.update(sessionId, merged);
	}

	/** This process wrote the session's archive (as `revision`, when the store says). */
	written(sessionId: string, revision?: string): void {
		this.stored?.add(sessionId);
		if (revision !== undefined) this.revisions.set(sessionId, revision);
		else this.revisions.delete(sessionId);
	}

	/**
	 * A stored archive, with the revision it had just before the read recorded (when the store can
	 * say): one replaced during the read then shows as changed, never the other way round.
	 */
	private async readRecording(sessionId: string): Promise<SessionArchive | undefined> {
		const before = this.store.revisionOf?.(sessionId);
		const archive = await this.store.read(sessionId);
		if (archive && before !== undefined) this.revisions.set(sessionId, before);
		return archive;
	}

	/** The session's archive is gone from the store (moved aside as damaged). */
	forget(sessionId: string): void {
		this.stored?.delete(sessionId);
	}

	/** Whether the archive a checkpoint vouches for is there (an empty file vouches for none). */
	exists(checkpoint: SourceCheckpoint): boolean {
		if (checkpoint.size === 0) return true; // still empty: nothing to read
		return this.held.has(checkpoint.sessionId) || this.stored?.has(checkpoint.sessionId) === true;
	}

	/** A stored archive to update, or `undefined` (none, or unreadable — reported; the write then sets a damaged one aside). */
	async readStored(sessionId: string, warnings: string[]): Promise<SessionArchive | undefined> {
		if (!this.stored?.has(sessionId)) return undefined;
		try {
			return await this.readRecording(sessionId);
		} catch (err) {
			warnings.push(`archive ${sessionId}: ${(err as Error).message}`);
			return undefined;
		}
	}

	/**
	 * Holds the archives of these sessions for good (an ingest's own copy, or read from the store),
	 * so events about them apply to what is stored rather than to an empty archive.
	 */
	async hold(sessionIds: Iterable<string>, warnings: string[]): Promise<void> {
		await this.storedIds();
		for (const id of sessionIds) {
			if (this.held.has(id)) this.held.keep(id);
			else {
				const archive = await this.readStored(id, warnings);
				if (archive) this.held.hold(id, archive);
			}
		}
	}

	/**
	 * Holds every stored archive for good. A stored archive is already the projection of its
	 * events (replaying `archiveEvents` of it gives it back), so it is held as it was read.
	 * Damaged archives are reported, not fatal.
	 */
	async loadAll(): Promise<void> {
		const missing = [...(await this.storedIds())].filter((id) => !this.held.has(id));
		// A few reads in flight: the next files come off the disk while one is parsed.
		await mapLimit(missing, LOAD_CONCURRENCY, async (id) => {
			try {
				const archive = await this.store.read(id);
				if (archive) this.held.hold(id, archive);
			} catch (err) {
				this.warn(`archive ${id}: ${(err as Error).message}`);
				this.unreadable(id, err as Error);
			}
		});
		this.held.keepAll();
	}

	/**
	 * Applies one file's events to its session's archive: the one held, else the stored one (an
	 * archive is never made anew over a stored one). Before `load` (`loaded` false), an archive held
	 * for nothing else is held only until its write has it.
	 */
	async applyFile(
		sessionId: string,
		events: readonly HistoryEvent[],
		loaded: boolean,
		warnings: string[],
	): Promise<{ after: SessionArchive; written: boolean }> {
		const held = this.held.get(sessionId);
		const before = held ?? (await this.readStored(sessionId, warnings));
		// The file's events hold its `SessionSeen`: there is an archive after them.
		const after = evolveSession(before, events) as SessionArchive;
		const written = after !== before;
		if (held) this.held.update(sessionId, after);
		else if (loaded) this.held.hold(sessionId, after);
		else if (written) this.held.holdUntilWritten(sessionId, after);
		return { after, written };
	}

	/**
	 * Applies events from elsewhere (a live tail, the summary worker) to the archives they name,
	 * each held first (read from the store when it is not). Returns the archives that changed and
	 * can be written (a valid id: an archive no file name could hold stays in memory only).
	 */
	async applyLive(events: readonly HistoryEvent[], warnings: string[]): Promise<Map<string, SessionArchive>> {
		const bySession = eventsBySession(events);
		await this.hold([...bySession.keys()].filter(isValidId), warnings);
		const changed = new Map<string, SessionArchive>();
		for (const [id, own] of bySession) {
			const before = this.held.get(id);
			const after = evolveSession(before, own);
			if (!after || after === before) continue;
			this.held.hold(id, after);
			if (isValidId(id)) changed.set(id, after);
		}
		return changed;
	}
}
