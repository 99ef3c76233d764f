import { applyArchiveEvents, archiveEvents, initialArchiveState, projectNewArchive, type ArchiveState, type SessionArchive } from "../projections/archive.ts";
import type { HistoryEvent } from "../model/events.ts";
import { isValidId } from "../model/ids.ts";
import type { ArchiveStore, CheckpointStore, SessionDiscovery, SessionSource, SourceCheckpoint, SourceState, TextStore } from "./ports.ts";
import { buildQueryView, type QueryView } from "../projections/queryView.ts";
import {
	foldText,
	groupHits,
	listSessionFacts,
	pageInfo,
	parseNodeIdSyntax,
	parseSearch,
	readNode,
	type SearchHit,
	type SessionListFacts,
	unknownNode,
} from "../query/index.ts";
import type { ReadParams, ReadResult, SearchParams, SearchResult, SessionListResult, SessionsParams } from "../query/index.ts";
import { memoryTextStore } from "../projections/text/memoryTextStore.ts";
import { needsTextCheck, ScanCollector, type ScanHit } from "../projections/text/scanTexts.ts";
import { type DocMeta, parseDocMeta, projectSessionText, type SessionText, type SessionTextBody } from "../projections/text/sessionText.ts";
import { shownHit } from "../projections/text/shownHit.ts";
import { TextProjection } from "../projections/text/textProjection.ts";

/** Counts for one ingested session. */
export interface SessionIngestReport {
	readonly sessionId: string;
	readonly qa: number;
	readonly incomplete: number;
	readonly branches: number;
	/** Planned summaries per level: index 0 is level 1. */
	readonly plannedByLevel: readonly number[];
	readonly rejectedLines: number;
	/** Whether the archive file was (re)written. */
	readonly written: boolean;
	/** The archive had to be written and its write failed (the warnings say why): nothing of it is vouched for. */
	readonly failed?: boolean;
}

export interface IngestReport {
	/** The sessions of the files that were read. */
	readonly sessions: readonly SessionIngestReport[];
	/** Files not read because they are unchanged since they were ingested (`refresh` only). */
	readonly unchangedFiles: number;
	/** Files skipped and why, for a person to read (empty or unwritten files are skipped silently). */
	readonly warnings: readonly string[];
}

/** How a search is run, beyond its parameters (not the tool's: the caller's own). */
export interface SearchOptions {
	/** Leave out this session's Q&A in progress (the question being answered now, inside Pi). */
	readonly inProgressOf?: string;
}

export interface HistoryServiceOptions {
	readonly store: ArchiveStore;
	readonly discovery: SessionDiscovery;
	/**
	 * Per-file checkpoints kept between processes: with them, a new process's `refresh` skips the
	 * files that are unchanged since they were ingested (and whose archives are present) without
	 * reading them. Without them, every new process reads every file once.
	 */
	readonly checkpoints?: CheckpointStore;
	/** Where the text projection (what searches scan) is kept; in memory when absent. */
	readonly text?: TextStore;
	/** The longest session-file line read (default `MAX_LINE_BYTES`, 128 MB); a longer one is rejected alone. */
	readonly maxLineBytes?: number;
}

/** Archive writes an ingest keeps in flight while it reads on (they wait on the disk, not the CPU). */
const MAX_PENDING_WRITES = 8;
/** New sessions an ingest adds to the state together. */
const NEW_SESSIONS_BATCH = 64;
/** Archives read at once by `load`. */
const LOAD_CONCURRENCY = 4;
/** Files whose fingerprint or checkpoint state is taken at once (a stat; an open, a stat and a 4 KB read). */
const STAT_CONCURRENCY = 32;
/** Archives kept parsed for the hits shown and for `read` (navigation moves within a few sessions). */
const ARCHIVE_CACHE_SIZE = 8;

/**
 * The one service behind the CLI, the slash command and the tool: it ingests the workspace's
 * sessions into archives and keeps the query view. It does no I/O of its own; the store and the
 * discovery it is given do.
 */
export class HistoryService {
	/** The archives in memory: all of them once `load` ran, else only those something needed. */
	private state: ArchiveState = initialArchiveState();
	private view: QueryView | undefined;
	/** Whether every stored archive is in `state` (what queries and the summary worker need). */
	private loaded = false;
	/** Ids of the archives in the store (listed once, then kept up to date by this process's writes). */
	private stored: Set<string> | undefined;
	private readonly warnings: string[] = [];
	/** Warnings of the refreshes queries made (their reports are not returned): for `takeWarnings`. */
	private readonly noticed: string[] = [];
	/** The write of each session in flight (see `writeSession`), and the archive object last written. */
	private readonly writeChains = new Map<string, Promise<void>>();
	private readonly lastWritten = new Map<string, SessionArchive>();
	/** Sessions whose last write was not made durable yet (an ingest syncs the folder once at its end). */
	private readonly deferredWrites = new Set<string>();
	/** Fingerprint of each source as last ingested: unchanged files are not read again. */
	private readonly fingerprints = new Map<string, string>();
	/** Sessions whose archive a catch-up moved aside as damaged since the last repair (see `repaired`). */
	private readonly quarantined = new Set<string>();
	/** Projection bodies made of archive objects (see `bodyOf`): weak, they go with the archive. */
	private readonly bodies = new WeakMap<SessionArchive, SessionTextBody>();
	/** What searches scan and the session list reads: per session, its folded text and facts. */
	private readonly projection: TextProjection;
	/** Archives read for queries, by session, with the revision read (most recently used last). */
	private readonly archiveCache = new Map<string, { readonly revision: string; readonly archive: SessionArchive; readonly view: QueryView }>();
	/**
	 * Archives an ingest made or updated apart from the state (see `applyReplay`): until `load`,
	 * they stay here only until their write lands; after it, they join the state in batches.
	 */
	private readonly apart = new Map<string, SessionArchive>();
	/** The stored checkpoints, read once per process (then kept up to date in memory). */
	private checkpoints: Map<string, SourceCheckpoint> | undefined;
	/** The end of the load, ingest or live update in progress (see `serially`). */
	private turn: Promise<void> = Promise.resolve();

	constructor(private readonly options: HistoryServiceOptions) {
		this.projection = new TextProjection({
			archives: options.store,
			texts: options.text ?? memoryTextStore(),
			warn: (message) => this.warnings.push(message),
			unreadable: (id, err) => this.noteUnreadable(id, err),
		});
	}

	/**
	 * The projection body of an archive object, made once: a live update makes it for the overlay,
	 * and the archive's write then stores the same one.
	 */
	private bodyOf(archive: SessionArchive): SessionTextBody {
		let body = this.bodies.get(archive);
		if (!body) this.bodies.set(archive, (body = projectSessionText(archive)));
		return body;
	}

	/** Problems met since the last call (a damaged archive, a projection rebuilt): for a person to read. */
	takeWarnings(): string[] {
		return [...this.noticed.splice(0), ...this.warnings.splice(0)];
	}

	/** A query's refresh: what it reports is kept for `takeWarnings` (a query returns no report of its own). */
	private async refreshForQuery(): Promise<void> {
		this.noticed.push(...(await this.ingestSources(true)).warnings);
	}

	/**
	 * Brings every stored archive into memory (once): what the query view and the summary worker
	 * work on. Ingesting needs none of it — a refresh reads only the archives of the files that
	 * changed — so a process that only ingests (and Pi until the first query) never holds the
	 * whole history. A stored archive is already the projection of its events (replaying
	 * `archiveEvents` of it gives it back), so it joins the state as it was read. Damaged archives
	 * are reported, not fatal.
	 */
	async load(): Promise<void> {
		if (this.loaded) return;
		return this.serially(() => this.loadNow());
	}

	private async loadNow(): Promise<void> {
		if (this.loaded) return;
		const read: Record<string, SessionArchive> = {};
		const missing = [...(await this.storedIds())].filter((id) => this.state.sessions[id] === undefined && !this.apart.has(id));
		// A few reads in flight: the next files come off the disk while one is parsed.
		await mapLimit(missing, LOAD_CONCURRENCY, async (id) => {
			try {
				const archive = await this.options.store.read(id);
				if (archive) read[id] = archive;
			} catch (err) {
				this.warnings.push(`archive ${id}: ${(err as Error).message}`);
				this.noteUnreadable(id, err as Error);
			}
		});
		// (Nothing else changes the state meanwhile: loads, ingests and live updates take turns.)
		// A new session record, not a `produce`: immer would walk every archive just read to look for drafts.
		this.state = { ...this.state, sessions: { ...this.state.sessions, ...read } };
		this.loaded = true;
		this.addApartSessions();
	}

	/**
	 * Brings into memory the archives that have summaries due (pending or stale), as the text
	 * projection counts them, and returns the archives held: what a summary pass works on. The
	 * rest of the history is not read (a pass after every interaction must not parse it all).
	 * `only`: of these, the sessions to bring in (the current one, when backfill is off).
	 */
	async loadDue(only?: (sessionId: string) => boolean): Promise<ArchiveState> {
		const due = [...(await this.summaryBacklog()).keys()].filter((id) => only === undefined || only(id));
		await this.serially(() => this.hold(due));
		return this.state;
	}

	/** Summaries due (pending or stale) per session that has any, from the text projection: no archive is read. */
	async summaryBacklog(): Promise<ReadonlyMap<string, number>> {
		await this.projection.catchUp();
		const due = new Map<string, number>();
		for (const t of this.projection.sessions()) if ((t.header.session.summariesDue ?? 0) > 0) due.set(t.sessionId, t.header.session.summariesDue ?? 0);
		return due;
	}

	/** The archives in memory now: all of them after `load`, those with due summaries after `loadDue`, … */
	heldState(): ArchiveState {
		return this.state;
	}

	/** Whether every stored archive is in memory (`load` ran). */
	get isLoaded(): boolean {
		return this.loaded;
	}

	/** How many session archives this service holds in memory (a bench and a test look). */
	get sessionsInMemory(): number {
		let n = this.apart.size;
		for (const id of Object.keys(this.state.sessions)) if (!this.apart.has(id)) n++;
		return n;
	}

	/** The ids of the stored archives (listed once per process). */
	private async storedIds(): Promise<Set<string>> {
		this.stored ??= new Set(await this.options.store.list());
		return this.stored;
	}

	/**
	 * Reads every discovered session file and updates the archives that changed; then checks the
	 * stored archives (`checkArchives` of `refresh`).
	 */
	async ingest(): Promise<IngestReport> {
		return this.checked(await this.ingestSources(false), false);
	}

	/**
	 * Picks up what changed since the last ingest: files whose fingerprint (size, mtime, inode) is
	 * unchanged since this process read them are not read again, nor — with a checkpoint store —
	 * files unchanged since any process ingested them into archives that are loaded (size, mtime and
	 * a hash of the first 4 KB). A refresh with nothing new costs a folder listing and a few system
	 * calls per file, taken concurrently. What every query calls first.
	 */
	async refresh(options: { readonly checkArchives?: boolean } = {}): Promise<IngestReport> {
		const report = await this.ingestSources(true);
		return options.checkArchives ? this.checked(report, true) : report;
	}

	/**
	 * After an ingest: every archive changed since the projection last saw it is read (the
	 * projection's catch-up), so one cut short or damaged by hand is found — moved aside and its
	 * session extracted again here — instead of passing as "unchanged". Costs a `stat` per archive
	 * when nothing changed.
	 */
	private async checked(report: IngestReport, skipUnchanged: boolean): Promise<IngestReport> {
		// Fresh: every archive's own `stat`, not the folder's (one cut short in place by hand shows only there).
		await this.projection.catchUp(undefined, undefined, { fresh: true });
		const problems = this.warnings.splice(0);
		if (this.quarantined.size === 0) return { ...report, warnings: [...report.warnings, ...problems] };
		this.quarantined.clear();
		const again = await this.ingestSources(skipUnchanged);
		const redone = new Set(again.sessions.map((s) => s.sessionId));
		return {
			sessions: [...report.sessions.filter((s) => !redone.has(s.sessionId)), ...again.sessions],
			unchangedFiles: again.unchangedFiles,
			warnings: [...report.warnings, ...problems, ...again.warnings],
		};
	}

	/**
	 * A query, run again once when it moved a damaged archive aside: the query's refresh then
	 * extracts that session again from its native file, so the answer includes it.
	 */
	private async repaired<T>(query: () => Promise<T>): Promise<T> {
		let result: T;
		try {
			result = await query();
		} catch (err) {
			if (this.quarantined.size === 0) throw err;
			result = undefined as T;
		}
		if (this.quarantined.size === 0) return result;
		this.quarantined.clear();
		return query();
	}

	/** An archive that could not be read; one moved aside (damaged) is extracted again from its native file, as if never ingested. */
	private noteUnreadable(id: string, err: Error): void {
		if ((err as { quarantined?: unknown }).quarantined === undefined) return;
		this.stored?.delete(id);
		this.fingerprints.clear();
		this.quarantined.add(id);
	}

	/**
	 * Loading, ingesting and applying live events take turns. Each reads stored archives and then
	 * changes the state; interleaved, a load could read an archive, an ingest then write a newer
	 * one and let it go, and the load keep the older copy for good (a test reproduces it).
	 */
	private serially<T>(work: () => Promise<T>): Promise<T> {
		const run = this.turn.then(work);
		this.turn = run.then(
			() => undefined,
			() => undefined,
		);
		return run;
	}

	private ingestSources(skipUnchanged: boolean): Promise<IngestReport> {
		return this.serially(() => this.ingestNow(skipUnchanged));
	}

	private async ingestNow(skipUnchanged: boolean): Promise<IngestReport> {
		await this.storedIds();
		const { sources, warnings: discoveryWarnings } = await this.options.discovery.discover();
		const warnings = [...this.warnings.splice(0), ...discoveryWarnings];
		const reports: SessionIngestReport[] = [];

		// What has to be read. Fingerprints and checkpoint states cost a few system calls per file:
		// they are taken for all files at once. A state is taken before its file is read, so a file
		// that changes while it is read shows as changed next time.
		const fingerprints = await mapLimit(sources, STAT_CONCURRENCY, (s) => s.fingerprint?.().catch(() => undefined));
		let todo = sources.map((source, i) => ({ source, fingerprint: fingerprints[i], state: undefined as SourceState | undefined }));
		if (skipUnchanged) todo = todo.filter((t) => t.fingerprint === undefined || this.fingerprints.get(t.source.key) !== t.fingerprint);
		const checkpoints = await this.storedCheckpoints();
		const fresh = new Map<string, SourceCheckpoint>();
		if (checkpoints && skipUnchanged) {
			// A file whose fingerprint (size, mtime, inode, ctime) is the one its checkpoint recorded is
			// unchanged: no need to open it. (A copied workspace has new inodes: its files are checked
			// by their heads below, once, and their checkpoints take the new fingerprints.)
			todo = todo.filter((t) => {
				const checkpoint = t.source.stateKey !== undefined ? checkpoints.get(t.source.stateKey) : undefined;
				if (!checkpoint || checkpoint.stamp === undefined || checkpoint.stamp !== t.fingerprint || !this.archiveExists(checkpoint)) return true;
				this.fingerprints.set(t.source.key, t.fingerprint);
				return false;
			});
		}
		if (checkpoints) {
			// Taken ahead only where it can spare a read (a checkpoint to compare with); the others'
			// states come from their reads (`SessionSource.read`), one open per file instead of two.
			const ahead = todo.filter((t) => t.source.stateKey === undefined || (skipUnchanged && checkpoints.has(t.source.stateKey)));
			const states = await mapLimit(ahead, STAT_CONCURRENCY, (t) => t.source.state?.().catch(() => undefined));
			ahead.forEach((t, i) => {
				t.state = states[i];
			});
			if (skipUnchanged) {
				todo = todo.filter((t) => {
					const checkpoint = t.state ? checkpoints.get(t.state.key) : undefined;
					if (!t.state || !checkpoint || !this.unchangedSince(checkpoint, t.state)) return true;
					if (t.fingerprint !== undefined) {
						this.fingerprints.set(t.source.key, t.fingerprint);
						// Unchanged, with another fingerprint (a copy, a touch): recorded, so the next process need not open it.
						fresh.set(t.state.key, { ...checkpoint, stamp: t.fingerprint });
					}
					return false;
				});
			}
		}

		/** Sessions whose archive write failed. */
		const failed = new Set<string>();
		const unchangedFiles = sources.length - todo.length;
		// Archive writes wait on the disk (lock, fsync, rename): the next file is read meanwhile.
		const writes = new Set<Promise<void>>();
		// The next file is read (its chunks parsed as they arrive) while this one is applied and its
		// archive handed to the disk: without it the loop sat idle for every file's open and first read.
		const startReplay = (t: (typeof todo)[number]): Promise<{ events?: HistoryEvent[]; error?: unknown; state?: SourceState }> => {
			let state = t.state;
			return this.replaySource(t.source, checkpoints && !state ? (s) => (state = s) : undefined).then(
				(events) => ({ events, ...(state ? { state } : {}) }),
				(error: unknown) => ({ error }),
			);
		};
		let next = todo[0] ? startReplay(todo[0]) : undefined;
		try {
			for (let k = 0; k < todo.length; k++) {
				const { source, fingerprint } = todo[k] as (typeof todo)[number];
				const replayed = await (next as NonNullable<typeof next>);
				next = k + 1 < todo.length ? startReplay(todo[k + 1] as (typeof todo)[number]) : undefined;
				try {
					if (replayed.error !== undefined) throw replayed.error;
					const state = replayed.state;
					const events = replayed.events as HistoryEvent[];
					const ingested = await this.applyReplay(source, events, warnings);
					if (ingested.report) reports.push(ingested.report);
					const done = () => {
						if (fingerprint !== undefined) this.fingerprints.set(source.key, fingerprint);
						// Files that gave a session are checkpointed, and empty ones (named by Pi, not written yet:
						// reading one would load the pipeline at every query); the others say something worth
						// repeating (a hostile id).
						if (state && (ingested.sessionId !== "" || state.size === 0)) {
							fresh.set(state.key, {
								size: state.size,
								mtimeMs: state.mtimeMs,
								headHash: state.headHash,
								sessionId: ingested.sessionId,
								...(fingerprint !== undefined ? { stamp: fingerprint } : {}),
							});
						}
					};
					if (!ingested.write) done();
					else {
						const write: Promise<void> = ingested.write
							.then(done, (err: Error) => {
								warnings.push(`${source.key}: ${err.message}`);
								failed.add(ingested.sessionId);
							})
							.finally(() => writes.delete(write));
						writes.add(write);
						if (writes.size >= MAX_PENDING_WRITES) await Promise.race(writes);
					}
				} catch (err) {
					warnings.push(`${source.key}: ${(err as Error).message}`);
				}
			}
		} finally {
			this.addApartSessions();
		}
		await Promise.all(writes);
		if (this.deferredWrites.size > 0) {
			// One folder sync for the whole ingest, before any checkpoint vouches for its archives.
			this.deferredWrites.clear();
			await this.options.store.sync?.().catch((err: Error) => {
				warnings.push(`archives: ${err.message}`);
				fresh.clear();
			});
		}
		if (checkpoints && fresh.size > 0) {
			for (const [key, value] of fresh) checkpoints.set(key, value);
			// Saved only after the archives they vouch for are written.
			await this.options.checkpoints?.save(fresh).catch((err: Error) => warnings.push(`checkpoints: ${err.message}`));
		}
		// A failed write is not "written": the report says so, and the CLI exits non-zero.
		const sessions = failed.size === 0 ? reports : reports.map((r) => (failed.has(r.sessionId) ? { ...r, written: false, failed: true } : r));
		return { sessions, unchangedFiles, warnings };
	}

	/**
	 * The history events of one file: the replay pipeline over its bytes. The pipeline (and RxJS)
	 * is loaded on the first file read: a query that finds every file unchanged never loads it.
	 */
	private async replaySource(source: SessionSource, onState?: (state: SourceState) => void): Promise<HistoryEvent[]> {
		const { replayEvents } = await import("../ingest/replayEvents.ts");
		return replayEvents(source, onState, this.options.maxLineBytes !== undefined ? { maxLineBytes: this.options.maxLineBytes } : {});
	}

	/** The stored checkpoints (read once per process), or `undefined` without a checkpoint store. */
	private async storedCheckpoints(): Promise<Map<string, SourceCheckpoint> | undefined> {
		if (!this.options.checkpoints) return undefined;
		this.checkpoints ??= new Map(
			await this.options.checkpoints.load().catch((err: Error) => {
				// Without them every file is read again: slower, never wrong.
				this.warnings.push(`checkpoints: ${err.message}`);
				return new Map<string, SourceCheckpoint>();
			}),
		);
		return this.checkpoints;
	}

	/** A file is skipped when it is as it was when ingested and the archive it went into exists. */
	private unchangedSince(checkpoint: SourceCheckpoint | undefined, state: SourceState): boolean {
		if (!checkpoint) return false;
		if (checkpoint.size !== state.size || checkpoint.mtimeMs !== state.mtimeMs || checkpoint.headHash !== state.headHash) return false;
		return this.archiveExists(checkpoint);
	}

	/** Whether the archive a checkpoint vouches for is there (an empty file vouches for none). */
	private archiveExists(checkpoint: SourceCheckpoint): boolean {
		if (checkpoint.size === 0) return true; // still empty: nothing to read
		const id = checkpoint.sessionId;
		return this.state.sessions[id] !== undefined || this.apart.has(id) || this.stored?.has(id) === true;
	}

	/**
	 * Applies events from elsewhere (the live tail of the current session file) and writes the
	 * archives they changed.
	 */
	async applyEvents(events: readonly HistoryEvent[]): Promise<void> {
		// The state changes in turn; the writes (queued per session) are waited for outside it, so a
		// query need not wait for a live update's fsync to see it.
		const writes = await this.serially(() => this.applyEventsNow(events));
		await Promise.all(writes);
	}

	private async applyEventsNow(events: readonly HistoryEvent[]): Promise<Promise<void>[]> {
		const sessionIds = new Set<string>();
		for (const e of events) {
			const id =
				e.type === "SessionSeen"
					? e.session.sessionId
					: e.type === "QaObserved"
						? e.node.sessionId
						: e.type === "SummaryPlanned"
							? e.plan.sessionId
							: e.sessionId;
			if (id !== undefined && isValidId(id)) sessionIds.add(id);
		}
		await this.hold(sessionIds);
		const before = this.state;
		this.state = applyArchiveEvents(
			this.state,
			events.filter((e) => e.type !== "LineRejected" || e.sessionId !== undefined),
		);
		const writes: Promise<void>[] = [];
		for (const id of sessionIds) {
			const after = this.state.sessions[id];
			if (!after || after === before.sessions[id]) continue;
			// Searchable at once, from memory, until its archive (and so its projection) is written.
			this.projection.overlay(after, this.bodyOf(after));
			writes.push(this.writeSession(id));
		}
		return writes;
	}

	/**
	 * Writes a session's archive as it stands when the write's turn comes, one write per session at
	 * a time. Writes of one session are queued, and each takes the latest state: a write that was
	 * asked for earlier can never land after a later one and put back an older branch set.
	 */
	private writeSession(sessionId: string, durability: "durable" | "deferred" = "durable"): Promise<void> {
		const previous = this.writeChains.get(sessionId) ?? Promise.resolve();
		const next = previous
			.catch(() => undefined)
			.then(async () => {
				// A session an ingest made apart may not have joined the state yet (see `applyReplay`).
				const current = this.state.sessions[sessionId] ?? this.apart.get(sessionId);
				if (!current || this.lastWritten.get(sessionId) === current) {
					// Written already, maybe by an ingest that defers durability: make it durable now.
					if (durability === "durable" && this.deferredWrites.delete(sessionId)) await this.options.store.sync?.();
					return;
				}
				if (durability === "deferred") this.deferredWrites.add(sessionId);
				else this.deferredWrites.delete(sessionId);
				// Not loaded: nothing needs an archive an ingest made apart once its write has it (loads
				// and live updates wait for the ingest's turn, which ends after its writes), so it goes
				// now and dies young while the write waits on the disk — a cold ingest's writes in flight
				// were promoted otherwise, a megabyte at each young collection. A write that fails then
				// loses only this copy: without a checkpoint, the next refresh reads the file again.
				const letGo = !this.loaded && this.apart.get(sessionId) === current;
				if (letGo) {
					this.apart.delete(sessionId);
					this.lastWritten.delete(sessionId);
				}
				const kept = letGo ? undefined : current;
				// The projection's body is made now, while the archive is at hand (an ingest lets it go).
				const text = this.bodyOf(current);
				try {
					const written = await this.options.store.write(current, durability === "deferred" ? { deferDurability: true } : {});
					this.stored?.add(sessionId);
					if (kept) this.lastWritten.set(sessionId, kept);
					const stored = written?.archive ?? kept;
					if (written && stored) this.cacheArchive(sessionId, written.revision, stored);
					await this.projection.put(written?.archive ?? text, written?.revision);
				} finally {
					// The file now says what this archive said (or the write failed: the file is what there is).
					this.projection.dropOverlay(current);
				}
			});
		this.writeChains.set(sessionId, next);
		next.then(
			() => this.writeChains.get(sessionId) === next && this.writeChains.delete(sessionId),
			() => this.writeChains.get(sessionId) === next && this.writeChains.delete(sessionId),
		);
		return next;
	}

	/**
	 * Puts the archives of these sessions into the state (from an ingest's own copy, or read from
	 * the store), so events about them apply to what is stored rather than to an empty archive.
	 */
	private async hold(sessionIds: Iterable<string>): Promise<void> {
		await this.storedIds();
		const add: Record<string, SessionArchive> = {};
		for (const id of sessionIds) {
			if (this.state.sessions[id] !== undefined) continue;
			// An ingest's own copy (made once the history was loaded) is newer than the stored one.
			const archive = this.apart.get(id) ?? (await this.readStored(id, this.warnings));
			this.apart.delete(id);
			if (archive) add[id] = archive;
		}
		if (Object.keys(add).length > 0) this.state = { ...this.state, sessions: { ...this.state.sessions, ...add } };
	}

	/** The query view over every archive (call `load` first), built on demand, reusing unchanged sessions. */
	getView(): QueryView {
		this.assertLoaded("getView");
		if (!this.view || this.view.state !== this.state) this.view = buildQueryView(this.state, this.view);
		return this.view;
	}

	/** Every archive (call `load` first): what the summary worker reads. */
	archiveState(): ArchiveState {
		this.assertLoaded("archiveState");
		return this.state;
	}

	private assertLoaded(what: string): void {
		if (!this.loaded) throw new Error(`HistoryService.${what}: load() the archives first`);
	}

	/** The archive of a session (call `load` first). */
	getArchive(sessionId: string): SessionArchive | undefined {
		this.assertLoaded("getArchive");
		return this.state.sessions[sessionId];
	}

	/**
	 * Applies one file's events to the state. The archive write it needs (if any) is returned, not
	 * awaited: the caller decides how many to keep in flight. The state is updated before the
	 * write, as a live update's is.
	 */
	private async applyReplay(
		source: SessionSource,
		events: readonly HistoryEvent[],
		warnings: string[],
	): Promise<{ report?: SessionIngestReport; sessionId: string; write?: Promise<void> }> {
		const seen = events.find((e) => e.type === "SessionSeen");
		if (!seen) {
			if (events.length > 0) warnings.push(`${source.key}: no session header and no session id in the file name; ${events.length} line(s) rejected`);
			return { sessionId: "" };
		}
		const sessionId = seen.session.sessionId;
		if (!isValidId(sessionId)) {
			warnings.push(`${source.key}: session id ${JSON.stringify(sessionId.slice(0, 80))} is not a valid id; file skipped`);
			return { sessionId: "" };
		}
		const existing = this.state.sessions[sessionId];
		if (existing === undefined) {
			// A session the state does not hold: its archive is made apart (the reducer only touches
			// the session its events name, so the result is the same), from what is stored if
			// anything is. Once the history is loaded it joins the state with others in a batch
			// (adding each at once copies the whole session record every time: quadratic over a
			// cold ingest of a thousand files); until then it is dropped once written.
			const before = this.apart.get(sessionId) ?? (await this.readStored(sessionId, warnings));
			const after = (before ? applyArchiveEvents({ sessions: { [sessionId]: before } }, events) : projectNewArchive(events)).sessions[
				sessionId
			] as SessionArchive;
			const written = after !== before;
			if (written || this.apart.has(sessionId) || this.loaded) this.apart.set(sessionId, after);
			if (this.loaded && this.apart.size >= NEW_SESSIONS_BATCH) this.addApartSessions();
			return { report: reportOf(after, events, written), sessionId, ...(written ? { write: this.writeSession(sessionId, "deferred") } : {}) };
		}
		this.state = applyArchiveEvents(this.state, events);
		const after = this.state.sessions[sessionId] as SessionArchive;
		const written = after !== existing;
		return { report: reportOf(after, events, written), sessionId, ...(written ? { write: this.writeSession(sessionId, "deferred") } : {}) };
	}

	/** A stored archive to update, or `undefined` (none, or unreadable — reported; the write then sets a damaged one aside). */
	private async readStored(sessionId: string, warnings: string[]): Promise<SessionArchive | undefined> {
		if (!this.stored?.has(sessionId)) return undefined;
		try {
			return await this.options.store.read(sessionId);
		} catch (err) {
			warnings.push(`archive ${sessionId}: ${(err as Error).message}`);
			return undefined;
		}
	}

	/**
	 * Once the history is loaded: adds the sessions an ingest made apart to the state, in one copy
	 * of the session record. One that the state got meanwhile (a live update) is merged through the
	 * reducer instead.
	 */
	private addApartSessions(): void {
		if (!this.loaded || this.apart.size === 0) return;
		const sessions: Record<string, SessionArchive> = { ...this.state.sessions };
		const merge: HistoryEvent[] = [];
		for (const [id, archive] of this.apart) {
			if (sessions[id] === undefined) sessions[id] = archive;
			else merge.push(...archiveEvents(archive));
		}
		this.apart.clear();
		this.state = { ...this.state, sessions };
		if (merge.length > 0) this.state = applyArchiveEvents(this.state, merge);
	}

	/**
	 * The workspace's sessions, newest first (fresh: picks up changed session files first), from
	 * the text projection's session facts: no archive is read.
	 */
	async sessions(params: SessionsParams = {}): Promise<SessionListResult> {
		return this.repaired(() => this.sessionsNow(params));
	}

	private async sessionsNow(params: SessionsParams): Promise<SessionListResult> {
		await this.refreshForQuery();
		await this.projection.catchUp();
		return this.listSessions(params);
	}

	private listSessions(params: SessionsParams): SessionListResult {
		const facts = Array.from(this.projection.sessions(), (head): [string, SessionListFacts] => [head.sessionId, head.header.session]);
		return listSessionFacts(facts, (id) => this.projection.get(id) !== undefined, params);
	}

	/**
	 * The tool's `search` (fresh): a scan of the text projection, then each shown hit's meta and
	 * original text (its snippet) from its projection file; no archive is read. Throws `QueryError`
	 * for bad parameters. `inProgressOf`: leave out that session's Q&A in progress (see
	 * `ScanFilter`); `leftOut` in the answer then says how many hits it was.
	 */
	async search(params: SearchParams = {}, options: SearchOptions = {}): Promise<(SearchResult & { readonly leftOut?: number }) | SessionListResult> {
		return this.repaired(() => this.searchNow(params, options));
	}

	private async searchNow(params: SearchParams, options: SearchOptions): Promise<(SearchResult & { readonly leftOut?: number }) | SessionListResult> {
		await this.refreshForQuery();
		// A session filter names a session the projection must know: caught up first (cheap, heads only).
		const filtering = params.sessionId !== undefined && params.sessionId !== null && params.sessionId !== "";
		if (filtering) await this.projection.catchUp();
		const parsed = parseSearch(params, filtering ? (id) => this.projection.get(id) !== undefined : () => true);
		if (parsed.query === "") {
			if (!filtering) await this.projection.catchUp();
			return this.listSessions(params);
		}
		const { needle, sessionId, window, page } = parsed;
		const collector = new ScanCollector(needle, {
			...(sessionId !== undefined ? { sessionId } : {}),
			window,
			...(options.inProgressOf !== undefined ? { inProgressOf: options.inProgressOf } : {}),
		});
		// The shown hits are read in the scan's turn: no projection update lands in between.
		return this.projection.scan(
			(text, head) => collector.add(text, head),
			sessionId,
			async () => {
				const checked = needsTextCheck(needle);
				if (checked) {
					// Byte matches of such a needle are candidates: kept when the original text confirms them.
					const confirmed = new Set<ScanHit>();
					for (const hit of collector.candidates) if (foldText((await this.originalOf(hit.head, hit.row)) ?? "").folded.includes(needle)) confirmed.add(hit);
					collector.retain((hit) => confirmed.has(hit));
				}
				const { ranked, total } = collector.finish(page.offset + page.limit);
				const shown: { level: number; hit: SearchHit }[] = [];
				for (const h of ranked.slice(page.offset, page.offset + page.limit)) {
					const original = await this.originalOf(h.head, h.row);
					const metaBytes = await this.projection.slice(h.head, h.head.metaRange(h.row));
					// Gone or changed since the scan (another process rewrote the file meanwhile): not shown.
					if (original === undefined || metaBytes === undefined) continue;
					let meta: DocMeta;
					try {
						meta = parseDocMeta(metaBytes);
					} catch {
						continue;
					}
					let verified = h.verified;
					if (checked && h.level > 0) {
						verified = false;
						for (const row of meta.coveredRows) if (foldText((await this.originalOf(h.head, row)) ?? "").folded.includes(needle)) verified = true;
					}
					const hit = shownHit(h.head, h.row, original, meta, needle, verified);
					if (hit) shown.push({ level: h.level, hit });
				}
				const leftOut = collector.leftOut > 0 ? { leftOut: collector.leftOut } : {};
				return { kind: "hits" as const, query: parsed.query, groups: groupHits(shown), ...pageInfo(total, page), ...leftOut };
			},
		);
	}

	/** A row's original text, read from its projection file. */
	private async originalOf(head: SessionText, row: number): Promise<string | undefined> {
		return (await this.projection.slice(head, head.originalRange(row)))?.toString("utf8");
	}

	/**
	 * Every archived Q&A by id, with its end time and whether it is completed: what a watcher
	 * needs to tell a new or changed Q&A from one already archived, without reading any archive.
	 */
	async archivedQa(): Promise<Map<string, { readonly endMs: number; readonly completed: boolean }>> {
		await this.projection.catchUp();
		const out = new Map<string, { endMs: number; completed: boolean }>();
		for (const head of await this.projection.withRows()) {
			for (let row = 0; row < head.docs; row++) if (head.level(row) === 0) out.set(head.id(row), { endMs: head.endMs(row), completed: head.completed(row) });
		}
		return out;
	}

	/** The tool's `read` (fresh): the archive of the node's session only. Throws `QueryError` for a bad or unknown id or bad paging. */
	async read(params: ReadParams): Promise<ReadResult> {
		return this.repaired(() => this.readNow(params));
	}

	private async readNow(params: ReadParams): Promise<ReadResult> {
		await this.refreshForQuery();
		const id = parseNodeIdSyntax(params?.id);
		// First the sessions the heads file names: the node's archive is read (fresh) either way,
		// so no catch-up of every other session is needed when one of them has it.
		for (const candidate of await this.projection.nodeCandidates(id)) {
			const found = await this.archiveOf(candidate);
			if (found?.view.nodes.has(id)) return readNode(found.view, params);
		}
		await this.projection.catchUp();
		const sessionId = await this.projection.sessionOfNode(id);
		const found = sessionId !== undefined ? await this.archiveOf(sessionId) : undefined;
		if (!found) throw unknownNode(id);
		return readNode(found.view, params);
	}

	/**
	 * A session's archive for a query, read at most once per revision (a few kept). When what is
	 * read is newer than the projection (another process wrote it since the catch-up), the
	 * projection is made again from it, so the two agree.
	 */
	private async archiveOf(sessionId: string): Promise<{ archive: SessionArchive; view: QueryView } | undefined> {
		const revision = this.projection.get(sessionId)?.revision;
		const cached = this.archiveCache.get(sessionId);
		if (cached && cached.revision === revision) {
			this.archiveCache.delete(sessionId);
			this.archiveCache.set(sessionId, cached);
			return cached;
		}
		const store = this.options.store;
		let read: { archive: SessionArchive; revision: string } | undefined;
		try {
			if (store.readWithRevision) read = await store.readWithRevision(sessionId);
			else {
				const archive = await store.read(sessionId);
				read = archive && revision !== undefined ? { archive, revision } : undefined;
			}
		} catch (err) {
			this.warnings.push(`archive ${sessionId}: ${(err as Error).message}`);
			this.noteUnreadable(sessionId, err as Error);
			return undefined;
		}
		if (!read) return undefined;
		if (read.revision !== revision) await this.projection.refresh(read.archive, read.revision);
		return this.cacheArchive(sessionId, read.revision, read.archive);
	}

	private cacheArchive(sessionId: string, revision: string, archive: SessionArchive): { archive: SessionArchive; view: QueryView } {
		const entry = { revision, archive, view: buildQueryView({ sessions: { [sessionId]: archive } }) };
		this.archiveCache.delete(sessionId);
		this.archiveCache.set(sessionId, entry);
		if (this.archiveCache.size > ARCHIVE_CACHE_SIZE) this.archiveCache.delete(this.archiveCache.keys().next().value as string);
		return entry;
	}
}

function reportOf(archive: SessionArchive, events: readonly HistoryEvent[], written: boolean): SessionIngestReport {
	const nodes = Object.values(archive.nodes);
	const plannedByLevel: number[] = [];
	for (const s of Object.values(archive.summaries)) plannedByLevel[s.level - 1] = (plannedByLevel[s.level - 1] ?? 0) + 1;
	return {
		sessionId: archive.session.sessionId,
		qa: nodes.length,
		incomplete: nodes.filter((n) => !n.completed).length,
		branches: archive.branches.length,
		plannedByLevel: Array.from(plannedByLevel, (n) => n ?? 0),
		rejectedLines: events.filter((e) => e.type === "LineRejected").length,
		written,
	};
}

/** `fn` over `items` with at most `limit` calls in flight; results in order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R> | undefined): Promise<(R | undefined)[]> {
	const out: (R | undefined)[] = new Array(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const i = next++;
			out[i] = await fn(items[i] as T);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return out;
}
