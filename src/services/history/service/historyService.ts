import type { HistoryEvent } from "../model/events.ts";
import { backlogOf, type SessionBacklog } from "../summaries/backfill.ts";
import type { ArchiveState, SessionArchive } from "../projections/archive.ts";
import { buildQueryView, type QueryView } from "../projections/queryView.ts";
import { memoryTextStore } from "../projections/text/memoryTextStore.ts";
import { type DocBytesCache, projectSessionText, type SessionTextBody } from "../projections/text/projectSessionText.ts";
import { TextProjection } from "../projections/text/textProjection.ts";
import type { ReadParams, ReadResult, SearchParams, SessionListResult, SessionsParams } from "../query/index.ts";
import { ArchiveCache } from "./archiveCache.ts";
import { type AppliedFile, type IngestReport, replayFile, reportOf, runIngest, sessionOfFile } from "./ingestRun.ts";
import type {
	ArchiveStore,
	CheckpointStore,
	IngestLease,
	LeaseHolder,
	SessionDiscovery,
	SessionSource,
	SourceCheckpoint,
	SourceState,
	SummaryClaims,
	TextStore,
} from "./ports.ts";
import { HistoryQueries, type SearchAnswer, type SearchOptions } from "./queries.ts";
import { Repairs } from "./repairs.ts";
import { type Durability, SessionWriter } from "./sessionWriter.ts";
import type { SummaryTarget } from "../summaries/summaryWorker.ts";
import { TimeSlice } from "./timeSlice.ts";
import { WorkspaceArchives } from "./workspaceArchives.ts";

export type { IngestReport, SessionIngestReport } from "./ingestRun.ts";
export type { SearchOptions } from "./queries.ts";

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
	/** Told how far a long piece of work is: session files read by an ingest, projection files made again. */
	readonly progress?: ProgressListener;
	/** Sessions the text pack may leave to their own files before an ingest or a warm-up packs again (default 64). */
	readonly packAfter?: number;
	/** The workspace's ingest lease across processes (`IngestLease`): without it, nothing waits for another process. */
	readonly lease?: IngestLease;
	/**
	 * Bytes of search text kept in memory between searches (a process that answers many: the CLI's
	 * resident query server); default none: each search reads the projection's files.
	 */
	readonly keepText?: number;
	/** Told who holds the ingest lease while an ingest waits for it, and `undefined` once the wait is over. */
	readonly onWait?: (holder: LeaseHolder | undefined) => void;
	/** Which process makes a session's summaries (`SummaryClaims`): without it, two processes may make the same ones. */
	readonly summaryClaims?: SummaryClaims;
}

/** What is being done (`sessions`: files read; `search text`: projection files made again), how far. */
export type ProgressListener = (work: "sessions" | "search text", done: number, total: number) => void;

/**
 * The one service behind the CLI, the slash command and the tool: it ingests the workspace's
 * sessions into archives, applies live updates, and answers queries. It coordinates; the work is
 * done by `runIngest` (one ingest), `SessionWriter` (the writes), `HistoryQueries` (the read
 * side) and the text projection. It does no I/O of its own; the store and the discovery it is
 * given do.
 */
export class HistoryService {
	/** The archives in memory (all of them once `load` ran, else only those something needed) and in the store. */
	private readonly archives: WorkspaceArchives;
	private view: QueryView | undefined;
	/** Whether every stored archive is held (what queries over the view and the summary worker need). */
	private loaded = false;
	private readonly warnings: string[] = [];
	/** Warnings of the refreshes queries made (their reports are not returned): for `takeWarnings`. */
	private readonly noticed: string[] = [];
	private readonly writer: SessionWriter;
	/** Lets the event loop turn between long steps of the archive writes (see `storeArchive`). */
	private readonly slice: TimeSlice;
	/** Fingerprint of each source as last ingested: unchanged files are not read again. */
	private readonly fingerprints = new Map<string, string>();
	/** The next refresh discovers every session file, not only those the folder watch reports changed (after a repair). */
	private lookEverywhere = false;
	private readonly repairs: Repairs;
	/** Projection bodies made of archive objects (see `bodyOf`): weak, they go with the archive. */
	private readonly bodies = new WeakMap<SessionArchive, SessionTextBody>();
	/**
	 * The documents' bytes in the last bodies of sessions updated live (`applyEvents`): each of
	 * their revisions is projected by copying what did not change. Only theirs: an ingest makes
	 * each body once.
	 */
	private readonly liveDocs: DocBytesCache = new WeakMap();
	/** Their records' JSON, for their archive writes (`ArchiveWriteOptions.jsonCache`). */
	private readonly liveJson = new WeakMap<object, Uint8Array>();
	private readonly liveSessions = new Set<string>();
	/** What searches scan and the session list reads: per session, its folded text and facts. */
	private readonly projection: TextProjection;
	private readonly archiveCache = new ArchiveCache();
	private readonly queries: HistoryQueries;
	/** The stored checkpoints, read once per process (then kept up to date in memory). */
	private checkpoints: Map<string, SourceCheckpoint> | undefined;
	/** The end of the load, ingest or live update in progress (see `serially`). */
	private turn: Promise<void> = Promise.resolve();
	/** The ingest run queued or started that has not begun looking at the session files yet (see `ingestSources`). */
	private undiscovered: { readonly skipUnchanged: boolean; readonly report: Promise<IngestReport> } | undefined;

	constructor(private readonly options: HistoryServiceOptions) {
		const warn = (message: string) => void this.warnings.push(message);
		const unreadable = (id: string, err: Error) => this.repairs.note(id, err);
		this.repairs = new Repairs(
			(id) => {
				this.archives.forget(id);
				this.fingerprints.clear();
				// Its session file has not changed: a refresh that looks only at what the folder watch
				// reports (Pi) would not read it again, and the session would stay out until it changed.
				this.lookEverywhere = true;
			},
			async (id) => {
				const { store } = this.options;
				return store.revisionOf ? store.revisionOf(id) !== undefined : (await store.list()).includes(id);
			},
			warn,
		);
		this.archives = new WorkspaceArchives(options.store, warn, unreadable);
		this.projection = new TextProjection({
			archives: options.store,
			texts: options.text ?? memoryTextStore(),
			warn,
			unreadable,
			...(options.progress ? { progress: (done: number, total: number) => options.progress?.("search text", done, total) } : {}),
			...(options.packAfter !== undefined ? { packAfter: options.packAfter } : {}),
			...(options.keepText !== undefined ? { keepText: options.keepText } : {}),
		});
		this.slice = new TimeSlice();
		this.writer = new SessionWriter({
			current: (id) => this.archives.held.get(id),
			// Not loaded: nothing needs an archive an ingest made once its write has it (loads and
			// live updates wait for the ingest's turn, which ends after its writes), so it goes now
			// and dies young while the write waits on the disk — a cold ingest's writes in flight
			// were promoted otherwise, a megabyte at each young collection. A write that fails then
			// loses only this copy: without a checkpoint, the next refresh reads the file again.
			letGo: (id, archive) => !this.loaded && this.archives.held.releaseWritten(id, archive),
			store: (id, archive, durability, kept) => this.storeArchive(id, archive, durability, kept),
			sync: async () => this.options.store.sync?.(),
		});
		this.queries = new HistoryQueries({
			store: options.store,
			projection: this.projection,
			archives: this.archiveCache,
			refresh: async () => void this.noticed.push(...(await this.ingestSources(true)).warnings),
			warn,
			unreadable,
		});
	}

	/** Problems met since the last call (a damaged archive, a projection rebuilt): for a person to read. */
	takeWarnings(): string[] {
		return [...this.noticed.splice(0), ...this.warnings.splice(0)];
	}

	/**
	 * Brings every stored archive into memory (once): what the query view and the summary worker
	 * work on. Ingesting needs none of it — a refresh reads only the archives of the files that
	 * changed — so a process that only ingests (and Pi until the first query) never holds the
	 * whole history. A stored archive is already the projection of its events (replaying
	 * `archiveEvents` of it gives it back), so it is held as it was read. Damaged archives are
	 * reported, not fatal.
	 */
	async load(): Promise<void> {
		if (this.loaded) return;
		return this.serially(() => this.loadNow());
	}

	private async loadNow(): Promise<void> {
		if (this.loaded) return;
		// (Nothing else changes the archives meanwhile: loads, ingests and live updates take turns.)
		await this.archives.loadAll();
		this.loaded = true;
	}

	/**
	 * Brings into memory the archives that have summaries due (pending or stale), as the text
	 * projection counts them, and returns the archives held: what a summary pass works on. The
	 * rest of the history is not read (a pass after every interaction must not parse it all).
	 * `only`: of these, the sessions to bring in (the current one, when backfill is off).
	 */
	async loadDue(only?: (sessionId: string) => boolean): Promise<ArchiveState> {
		await this.projection.catchUp();
		const due = [...this.projection.sessions()].filter((t) => (t.header.session.summariesDue ?? 0) > 0 && (only === undefined || only(t.sessionId)));
		return this.loadSessions(due.map((t) => t.sessionId));
	}

	/**
	 * Brings these sessions' stored archives into memory (those not held yet) and returns the
	 * archives held. For a caller that already knows which (from `summaryBacklog`): no catch-up.
	 */
	async loadSessions(sessionIds: Iterable<string>): Promise<ArchiveState> {
		const ids = [...sessionIds];
		await this.serially(() => this.archives.hold(ids, this.warnings));
		return this.archives.held.state();
	}

	/**
	 * Summaries due (pending or stale) per session that has any, with an estimate of what making
	 * them reads (`backlogOf`). From the text projection's rows: no archive is read.
	 */
	async summaryBacklog(): Promise<ReadonlyMap<string, SessionBacklog>> {
		await this.projection.catchUp();
		// The header lines say whether anything is due: only then are the rows read.
		if (![...this.projection.sessions()].some((t) => (t.header.session.summariesDue ?? 0) > 0)) return new Map();
		return backlogOf(await this.projection.withRows());
	}

	/**
	 * Gets ready for the first query without answering one: the text projection caught up (each
	 * session's header line in memory, a projection missing or behind made again). Pi calls it
	 * once the start's ingest is done, so the person's first search does not pay for it. Reads no
	 * archive and no text; a search reads each session's rows with its text (Pi's searches after
	 * its first keep them).
	 */
	async warm(options: { readonly texts?: boolean } = {}): Promise<void> {
		await this.projection.catchUp(undefined, undefined, { pack: true });
		// (A service that keeps text, `keepText`: its text read into memory now, not by the first search.)
		if (options.texts) await this.projection.keepAll();
	}

	/** Bytes of search text kept in memory between searches (`keepText`). */
	get keptTextBytes(): number {
		return this.projection.keptBytes;
	}

	/**
	 * What a summary pass works on: the archives held (through `view`: Pi's pass over its current
	 * session sees only that), the events it makes applied and written, and — with summary claims —
	 * a session's summaries made only by the process that claims it: this one, after catching up
	 * with what is stored (what another process made is not made again), or another, which the pass
	 * leaves them to. A claim that cannot be taken for another reason (a read-only folder) does not
	 * stop the pass. A claim goes when nothing more is due in its session, the rest at the pass's end.
	 */
	summaryTarget(view: (state: ArchiveState) => ArchiveState = (state) => state): SummaryTarget {
		const claims = this.options.summaryClaims;
		const held = new Map<string, () => Promise<void>>();
		return {
			state: () => view(this.archives.held.state()),
			applyEvents: (events) => this.applyEvents(events),
			...(claims
				? {
						claim: async (sessionId: string) => {
							let release: (() => Promise<void>) | undefined;
							try {
								release = await claims.claim(sessionId);
							} catch (err) {
								this.warnings.push(`summaries of ${sessionId}: not claimed (${(err as Error).message})`);
								return true;
							}
							if (!release) return false;
							held.set(sessionId, release);
							await this.serially(() => this.archives.catchUpHeld(sessionId, this.warnings));
							return true;
						},
						release: async (sessionId: string) => {
							const release = held.get(sessionId);
							held.delete(sessionId);
							await release?.().catch(() => undefined);
						},
						releaseClaims: async () => {
							const releases = [...held.values()];
							held.clear();
							await Promise.all(releases.map((r) => r().catch(() => undefined)));
						},
					}
				: {}),
		};
	}

	/** The archives in memory now: all of them after `load`, those with due summaries after `loadDue`, … */
	heldState(): ArchiveState {
		return this.archives.held.state();
	}

	/** Whether every stored archive is in memory (`load` ran). */
	get isLoaded(): boolean {
		return this.loaded;
	}

	/** How many session archives this service holds in memory (a bench and a test look). */
	get sessionsInMemory(): number {
		return this.archives.held.size;
	}

	/**
	 * Reads every discovered session file and updates the archives that changed; then checks the
	 * stored archives (`checkArchives` of `refresh`).
	 */
	async ingest(options: { readonly signal?: AbortSignal } = {}): Promise<IngestReport> {
		return this.checked(await this.ingestSources(false, options.signal), false, options.signal);
	}

	/**
	 * `ingest`, with the search text made again from the archives: it is removed first
	 * (`TextProjection.remakeAll`; derived, so nothing is lost) — damage inside a document's words is
	 * found by no check a search can afford. Its making is not reported as missing text. A run
	 * stopped by `signal` leaves what it did not make to the next query's catch-up.
	 */
	async rebuild(options: { readonly signal?: AbortSignal } = {}): Promise<IngestReport> {
		await this.projection.remakeAll();
		// (The ingest's own check, a full catch-up, makes every session's text again: into one pack.)
		return this.ingest(options);
	}

	/**
	 * Picks up what changed since the last ingest: files whose fingerprint (size, mtime, inode) is
	 * unchanged since this process read them are not read again, nor — with a checkpoint store —
	 * files unchanged since any process ingested them into archives that are loaded (size, mtime and
	 * a hash of the first 4 KB). A refresh with nothing new costs a folder listing and a few system
	 * calls per file, taken concurrently. What every query calls first.
	 *
	 * `signal` (both): once aborted, no further file is started; what was read is written, packed and
	 * checkpointed as in any run, and the report says how many files were left (`stopped`). A call
	 * that joins a run already waiting (see `ingestSources`) shares that run, and its signal.
	 */
	async refresh(options: { readonly checkArchives?: boolean; readonly signal?: AbortSignal } = {}): Promise<IngestReport> {
		const report = await this.ingestSources(true, options.signal);
		return options.checkArchives ? this.checked(report, true, options.signal) : report;
	}

	/**
	 * After an ingest: every archive changed since the projection last saw it is read (the
	 * projection's catch-up), so one cut short or damaged by hand is found — moved aside and its
	 * session extracted again here — instead of passing as "unchanged". Costs a `stat` per archive
	 * when nothing changed.
	 */
	private async checked(report: IngestReport, skipUnchanged: boolean, signal?: AbortSignal): Promise<IngestReport> {
		// Fresh: every archive's own `stat`, not the folder's (one cut short in place by hand shows only there).
		await this.projection.catchUp(undefined, undefined, { fresh: true, pack: true });
		return this.repairs.afterCheck(report, this.warnings.splice(0), () => this.ingestSources(skipUnchanged, signal));
	}

	/**
	 * Loading, ingesting and applying live events take turns. Each reads stored archives and then
	 * changes the held ones; interleaved, a load could read an archive, an ingest then write a
	 * newer one and let it go, and the load keep the older copy for good (a test reproduces it).
	 */
	private serially<T>(work: () => Promise<T>): Promise<T> {
		const run = this.turn.then(work);
		this.turn = run.then(
			() => undefined,
			() => undefined,
		);
		return run;
	}

	private ingestSources(skipUnchanged: boolean, signal?: AbortSignal): Promise<IngestReport> {
		// A run waiting for its turn, or not yet at its discovery, will see every file as it is from
		// then on: a refresh asked for meanwhile (Pi's first query during the start's ingest) joins it
		// instead of discovering every file again right after. One that reads every file serves a
		// refresh too, not the other way round.
		const open = this.undiscovered;
		if (open && (skipUnchanged || !open.skipUnchanged)) return open.report;
		// (Assigned below, before the run's turn comes: `serially` starts it after a resolution at the least.)
		let run: { readonly skipUnchanged: boolean; readonly report: Promise<IngestReport> } | undefined;
		const report = this.serially(async () => {
			await this.archives.storedIds();
			// From here on the files are looked at: a refresh asked for now needs a run of its own.
			if (this.undiscovered === run) this.undiscovered = undefined;
			// A refresh in a process that watches the session folders looks only at what changed.
			const discovery = this.options.discovery;
			// Archives gone under it (`.pi/pbot/history` deleted): their session files did not change, so
			// every file is looked at again, and none is skipped for having been read by this process.
			const archivesGone = skipUnchanged && (await this.archives.anyGone());
			if (archivesGone) this.fingerprints.clear();
			const onlyChanged = skipUnchanged && !this.lookEverywhere && !archivesGone;
			this.lookEverywhere = false;
			const { sources, warnings: discoveryWarnings } = (onlyChanged ? await discovery.changedSince?.() : undefined) ?? (await discovery.discover());
			const warnings = [...this.warnings.splice(0), ...discoveryWarnings];
			const checkpoints = await this.storedCheckpoints();
			const ports = {
				fingerprints: this.fingerprints,
				checkpoints,
				archiveExists: (checkpoint: SourceCheckpoint) => this.archives.exists(checkpoint),
				replay: (source: SessionSource, onState?: (state: SourceState) => void) => replayFile(source, onState, this.options.maxLineBytes),
				apply: (source: SessionSource, events: readonly HistoryEvent[], into: string[]) => this.applyFile(source, events, into),
				syncDeferred: () => this.writer.syncDeferred(),
				...(this.options.checkpoints ? { saveCheckpoints: this.options.checkpoints.save.bind(this.options.checkpoints) } : {}),
				packing: (files: number, run: () => Promise<void>) => this.projection.packingWhile(files, run),
				...(this.options.lease ? { lease: this.options.lease, reloadStored: () => this.reloadStored() } : {}),
				...(this.options.onWait ? { onWait: this.options.onWait } : {}),
			};
			const progress = this.options.progress;
			return runIngest(ports, sources, skipUnchanged, warnings, progress ? (done, total) => progress("sessions", done, total) : undefined, signal);
		});
		run = { skipUnchanged, report };
		this.undiscovered = run;
		// A run that failed before its discovery must not be joined after.
		report
			.catch(() => undefined)
			.finally(() => {
				if (this.undiscovered === run) this.undiscovered = undefined;
			});
		return report;
	}

	/**
	 * What another process may have stored while this one waited for the ingest lease: the archives'
	 * listing and the checkpoints (the stored ones replace those in memory; one out of date only
	 * costs a read, a checkpoint being trusted only while its file is as it says).
	 */
	private async reloadStored(): Promise<void> {
		await this.archives.relist();
		await this.takeStoredCheckpoints();
	}

	/** The stored checkpoints read again over those in memory (when they have been read once). */
	private async takeStoredCheckpoints(): Promise<void> {
		if (!this.options.checkpoints || !this.checkpoints) return;
		const stored = await this.options.checkpoints.load().catch(() => new Map<string, SourceCheckpoint>());
		for (const [key, value] of stored) this.checkpoints.set(key, value);
	}

	/** The stored checkpoints (read once per process, and again when another process saved some), or `undefined` without a checkpoint store. */
	private async storedCheckpoints(): Promise<Map<string, SourceCheckpoint> | undefined> {
		if (!this.options.checkpoints) return undefined;
		// Another process saved since (a Pi session's live file archived up to its end): read again.
		if (this.checkpoints && this.options.checkpoints.changed?.()) await this.takeStoredCheckpoints();
		this.checkpoints ??= new Map(
			await this.options.checkpoints.load().catch((err: Error) => {
				// Without them every file is read again: slower, never wrong.
				this.warnings.push(`checkpoints: ${err.message}`);
				return new Map<string, SourceCheckpoint>();
			}),
		);
		return this.checkpoints;
	}

	/**
	 * Applies one file's events to its session's archive: the one held, else the stored one (an
	 * archive is never made anew over a stored one). Before `load`, an archive held for nothing
	 * else is held only until its write has it. The write (if any) is returned, not awaited: the
	 * ingest decides how many to keep in flight.
	 */
	private async applyFile(source: SessionSource, events: readonly HistoryEvent[], warnings: string[]): Promise<AppliedFile> {
		const sessionId = sessionOfFile(source, events, warnings);
		if (sessionId === undefined) return { sessionId: "" };
		const { after, written } = await this.archives.applyFile(sessionId, events, this.loaded, warnings);
		return { report: reportOf(after, events, written), sessionId, ...(written ? { write: this.writer.write(sessionId, "deferred") } : {}) };
	}

	/**
	 * A session file followed live (Pi's current one): everything in it up to the state its
	 * `fingerprint` describes has been handed to `applyEvents` already. A refresh then leaves the
	 * file alone while it stays so, instead of reading the whole session again (the events were
	 * queued first, so a query's refresh and scan come after them).
	 *
	 * With `checkpoint` (the file's state as of that fingerprint, and its session), the stored
	 * checkpoint is brought up to it once the session's archive holds those events: another process
	 * — `pbot-history search` in a terminal, another Pi session of the workspace — then skips the
	 * file instead of reading it whole after every exchange (a 30 MB session: 0.8 s a search instead
	 * of 0.16). Resolves when it is saved (a failure is a warning: the others only read the file).
	 */
	async appliedLive(sourceKey: string, fingerprint: string, checkpoint?: { readonly state: SourceState; readonly sessionId: string }): Promise<void> {
		this.fingerprints.set(sourceKey, fingerprint);
		const store = this.options.checkpoints;
		if (!checkpoint || !store) return;
		const { state, sessionId } = checkpoint;
		const entry: SourceCheckpoint = { size: state.size, mtimeMs: state.mtimeMs, headHash: state.headHash, sessionId, stamp: fingerprint };
		const known = (await this.storedCheckpoints())?.get(state.key);
		if (known && known.stamp === fingerprint && known.sessionId === sessionId) return;
		try {
			// After the events handed over so far are applied (their turn), then after their write.
			await this.serially(async () => undefined);
			await this.writer.write(sessionId);
			if (!this.archives.held.has(sessionId) && !(await this.archives.storedIds()).has(sessionId)) return;
			await store.save(new Map([[state.key, entry]]));
			this.checkpoints?.set(state.key, entry);
		} catch (err) {
			this.warnings.push(`checkpoints: ${(err as Error).message}`);
		}
	}

	/**
	 * Applies events from elsewhere (the live tail of the current session file, the summary
	 * worker) and writes the archives they changed.
	 */
	async applyEvents(events: readonly HistoryEvent[]): Promise<void> {
		// A refresh asked for from now on must come after these events, not join a run queued before
		// them: a query in Pi reads the tail, then refreshes and scans, and a refresh that joined the
		// earlier run let the scan pass the update still in its turn (a pause precedes its overlay).
		this.undiscovered = undefined;
		// The archives change in turn; the writes (queued per session) are waited for outside it, so
		// a query need not wait for a live update's fsync to see it.
		const writes = await this.serially(() => this.applyEventsNow(events));
		await Promise.all(writes);
	}

	private async applyEventsNow(events: readonly HistoryEvent[]): Promise<Promise<void>[]> {
		const writes: Promise<void>[] = [];
		for (const [id, after] of await this.archives.applyLive(events, this.warnings)) {
			this.liveSessions.add(id);
			// The tail's read and derivation ran just before, in the same task: Pi's input may come first.
			await this.slice.pause();
			// Searchable at once, from memory, until its archive (and so its projection) is written.
			this.projection.overlay(after, this.bodyOf(after));
			writes.push(this.writer.write(id));
		}
		return writes;
	}

	/** One archive write (the writer's turn for its session) and what follows it: the projection and the query cache. */
	private async storeArchive(sessionId: string, archive: SessionArchive, durability: Durability, kept: boolean): Promise<void> {
		// The projection's body is made now, while the archive is at hand (an ingest lets it go).
		const text = this.bodyOf(archive);
		// Making the body and encoding the archive each take up to ≈ 50 ms for a large session: the
		// event loop may turn between them (Pi's input during a cold ingest).
		await this.slice.pause();
		try {
			const written = await this.options.store.write(archive, {
				...(durability === "deferred" ? { deferDurability: true } : {}),
				...(this.liveSessions.has(sessionId) ? { jsonCache: this.liveJson } : {}),
			});
			this.archives.written(sessionId, written?.revision);
			const stored = written?.archive ?? (kept ? archive : undefined);
			if (written && stored) this.archiveCache.put(sessionId, written.revision, stored);
			await this.projection.put(written?.archive ?? text, written?.revision);
		} finally {
			// The file now says what this archive said (or the write failed: the file is what there is).
			this.projection.dropOverlay(archive);
		}
	}

	/**
	 * The projection body of an archive object, made once: a live update makes it for the overlay,
	 * and the archive's write then stores the same one.
	 */
	private bodyOf(archive: SessionArchive): SessionTextBody {
		let body = this.bodies.get(archive);
		if (!body) {
			const reuse = this.liveSessions.has(archive.session.sessionId) ? this.liveDocs : undefined;
			this.bodies.set(archive, (body = projectSessionText(archive, { ...(reuse ? { reuse } : {}), copyKeys: this.projection.needsCopyKeys(archive) })));
		}
		return body;
	}

	/** The query view over every archive (call `load` first), built on demand, reusing unchanged sessions. */
	getView(): QueryView {
		this.assertLoaded("getView");
		const state = this.archives.held.state();
		if (!this.view || this.view.state !== state) this.view = buildQueryView(state, this.view);
		return this.view;
	}

	/** Every archive (call `load` first): what the summary worker reads. */
	archiveState(): ArchiveState {
		this.assertLoaded("archiveState");
		return this.archives.held.state();
	}

	/** The archive of a session (call `load` first). */
	getArchive(sessionId: string): SessionArchive | undefined {
		this.assertLoaded("getArchive");
		return this.archives.held.get(sessionId);
	}

	private assertLoaded(what: string): void {
		if (!this.loaded) throw new Error(`HistoryService.${what}: load() the archives first`);
	}

	/** The workspace's sessions, newest first (fresh), from the text projection's session facts: no archive is read. */
	async sessions(params: SessionsParams = {}): Promise<SessionListResult> {
		return this.repairs.repaired(() => this.queries.sessions(params));
	}

	/**
	 * The tool's `search` (fresh): a scan of the text projection; no archive is read. Throws
	 * `QueryError` for bad parameters. `inProgressOf`: leave out that session's Q&A in progress
	 * (see `ScanFilter`); `leftOut` in the answer then says how many hits it was.
	 */
	async search(params: SearchParams = {}, options: SearchOptions = {}): Promise<SearchAnswer> {
		return this.repairs.repaired(() => this.queries.search(params, options));
	}

	/** The tool's `read` (fresh): the archive of the node's session only. Throws `QueryError` for a bad or unknown id or bad paging. */
	async read(params: ReadParams): Promise<ReadResult> {
		return this.repairs.repaired(() => this.queries.read(params));
	}

	/**
	 * Every archived Q&A by id, with its end time and whether it is completed: what a watcher
	 * needs to tell a new or changed Q&A from one already archived, without reading any archive.
	 */
	archivedQa(): Promise<Map<string, { readonly endMs: number; readonly completed: boolean }>> {
		return this.queries.archivedQa();
	}
}
