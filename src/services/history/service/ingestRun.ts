import type { HistoryEvent } from "../model/events.ts";
import { isValidId } from "../model/ids.ts";
import type { SessionArchive } from "../projections/archive.ts";
import type { IngestLease, LeaseHolder, SessionSource, SourceCheckpoint, SourceState } from "./ports.ts";

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
	/** Files left unread because the run was stopped (its `signal`); absent when it read them all. */
	readonly stopped?: number;
}

/** What applying one file's events did: the session (`""` when the file gave none) and the archive write it needs. */
export interface AppliedFile {
	readonly report?: SessionIngestReport;
	readonly sessionId: string;
	readonly write?: Promise<void>;
}

/** What one ingest run works with: the service's per-process memory and its steps. */
export interface IngestRunPorts {
	/** Fingerprint of each source as last ingested by this process (updated by the run). */
	readonly fingerprints: Map<string, string>;
	/** The checkpoints known (updated by the run), or `undefined` without a checkpoint store. */
	readonly checkpoints: Map<string, SourceCheckpoint> | undefined;
	/** Whether the archive a checkpoint vouches for is there. */
	archiveExists(checkpoint: SourceCheckpoint): boolean;
	/** The history events of one file; `onState` is told the file's state as read, when asked for. */
	replay(source: SessionSource, onState?: (state: SourceState) => void): Promise<HistoryEvent[]>;
	/** Applies one file's events to the archives; the write it needs is returned, not awaited. */
	apply(source: SessionSource, events: readonly HistoryEvent[], warnings: string[]): Promise<AppliedFile>;
	/** Makes the run's deferred archive writes durable (one folder sync). */
	syncDeferred(): Promise<void>;
	/** Stores checkpoints (merged over what is stored). */
	saveCheckpoints?(fresh: ReadonlyMap<string, SourceCheckpoint>): Promise<void>;
	/** Runs the reading of `files` files and their writes (`run`), their projections perhaps stored into a new pack (`TextProjection.packingWhile`). */
	packing?(files: number, run: () => Promise<void>): Promise<void>;
	/** The workspace's ingest lease, held by a run that reads `BULK_FILES` files or more. */
	readonly lease?: IngestLease;
	/** Told who holds the lease while this run waits for it, and `undefined` once it has it. */
	onWait?(holder: LeaseHolder | undefined): void;
	/** Reads again what another process may have stored before the lease was had: checkpoints, the archives' listing. */
	reloadStored?(): Promise<void>;
}

/**
 * A run that reads this many files or more takes the workspace's ingest lease first. Fewer (the
 * files a turn or two changed) never wait for another process's long run: reading them twice
 * costs less than the wait, and their writes merge under the archives' own locks.
 */
export const BULK_FILES = 8;

/** Archive writes an ingest keeps in flight while it reads on (they wait on the disk, not the CPU). */
export const MAX_PENDING_WRITES = 8;
/** Files whose fingerprint or checkpoint state is taken at once (a stat; an open, a stat and a 4 KB read). */
const STAT_CONCURRENCY = 32;

interface Todo {
	readonly source: SessionSource;
	readonly fingerprint: string | undefined;
	state: SourceState | undefined;
}

/**
 * One ingest over the discovered sources: picks the files to read (see `filesToRead`) — holding
 * the workspace's ingest lease when they are many (`BULK_FILES`) — reads the next file while the
 * current one is applied, keeps up to `MAX_PENDING_WRITES` archive writes in flight, syncs the
 * history folder once at the end, and only then saves the checkpoints that vouch for what was
 * written. `progress` is told 0 of the files to read first, then each one read.
 */
export async function runIngest(
	ports: IngestRunPorts,
	sources: readonly SessionSource[],
	skipUnchanged: boolean,
	warnings: string[],
	progress?: (done: number, total: number) => void,
	signal?: AbortSignal,
): Promise<IngestReport> {
	const fresh = new Map<string, SourceCheckpoint>();
	const todo = await filesToRead(ports, sources, skipUnchanged, fresh);
	const lease = ports.lease;
	if (!lease || todo.length < BULK_FILES) return readFiles(ports, todo, fresh, sources.length, warnings, progress, signal);
	// Many files: one process at a time reads them. Once the lease is had, what another process
	// stored meanwhile is read again, and the files are picked again (those it archived are skipped).
	let waited = false;
	let started = false;
	try {
		return await lease.hold(
			async () => {
				started = true;
				if (waited) ports.onWait?.(undefined);
				await ports.reloadStored?.();
				fresh.clear();
				const picked = await filesToRead(ports, sources, skipUnchanged, fresh);
				return readFiles(ports, picked, fresh, sources.length, warnings, progress, signal);
			},
			{
				onWait: (holder) => {
					waited = true;
					ports.onWait?.(holder);
				},
				...(signal ? { signal } : {}),
			},
		);
	} catch (err) {
		if (started) throw err;
		if (waited) ports.onWait?.(undefined);
		// Stopped while waiting: nothing was read.
		if (signal?.aborted) return { sessions: [], unchangedFiles: sources.length - todo.length, warnings, stopped: todo.length };
		// No lease to be had (another process kept it past the longest wait, a read-only workspace):
		// read without it, as before leases.
		warnings.push(`ingest lease: ${(err as Error).message}; reading the session files here too`);
		return readFiles(ports, todo, fresh, sources.length, warnings, progress, signal);
	}
}

/**
 * Reads `todo` and applies each file (see `runIngest`); `sourceCount`: the files discovered, for
 * the report's count of unchanged ones.
 */
async function readFiles(
	ports: IngestRunPorts,
	todo: readonly Todo[],
	fresh: Map<string, SourceCheckpoint>,
	sourceCount: number,
	warnings: string[],
	progress?: (done: number, total: number) => void,
	signal?: AbortSignal,
): Promise<IngestReport> {
	if (todo.length > 0) progress?.(0, todo.length);
	const reports: SessionIngestReport[] = [];
	/** Sessions whose archive write failed. */
	const failed = new Set<string>();
	// Archive writes wait on the disk (lock, fsync, rename): the next file is read meanwhile.
	const writes = new Set<Promise<void>>();
	// The next file is read (its chunks parsed as they arrive) while this one is applied and its
	// archive handed to the disk: without it the loop sat idle for every file's open and first read.
	const startReplay = (t: Todo): Promise<{ events?: HistoryEvent[]; error?: unknown; state?: SourceState }> => {
		let state = t.state;
		return ports.replay(t.source, ports.checkpoints && !state ? (s) => (state = s) : undefined).then(
			(events) => ({ events, ...(state ? { state } : {}) }),
			(error: unknown) => ({ error }),
		);
	};
	// Every file read and every write landed (their projections stored: into a new pack when
	// `packing` makes one).
	/** Files read and applied; fewer than `todo.length` when `signal` stopped the run. */
	let read = 0;
	const readAll = async (): Promise<void> => {
		// Stopped: no file is started after the signal, the one being read is applied (its write
		// lands with the others), and the run ends as any run does — writes, pack, sync, checkpoints.
		if (signal?.aborted) return;
		let next = todo[0] ? startReplay(todo[0]) : undefined;
		for (let k = 0; k < todo.length; k++) {
			const { source, fingerprint } = todo[k] as Todo;
			const replayed = await (next as NonNullable<typeof next>);
			read = k + 1;
			next = k + 1 < todo.length && !signal?.aborted ? startReplay(todo[k + 1] as Todo) : undefined;
			try {
				if (replayed.error !== undefined) throw replayed.error;
				const state = replayed.state;
				const ingested = await ports.apply(source, replayed.events as HistoryEvent[], warnings);
				if (ingested.report) reports.push(ingested.report);
				const done = () => {
					if (fingerprint !== undefined) ports.fingerprints.set(source.key, fingerprint);
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
			progress?.(k + 1, todo.length);
			if (!next) break;
		}
		await Promise.all(writes);
	};
	await (ports.packing ? ports.packing(todo.length, readAll) : readAll());
	// One folder sync for the whole ingest, before any checkpoint vouches for its archives.
	await ports.syncDeferred().catch((err: Error) => {
		warnings.push(`archives: ${err.message}`);
		fresh.clear();
	});
	if (ports.checkpoints && fresh.size > 0) {
		for (const [key, value] of fresh) ports.checkpoints.set(key, value);
		// Saved only after the archives they vouch for are written.
		await ports.saveCheckpoints?.(fresh).catch((err: Error) => warnings.push(`checkpoints: ${err.message}`));
	}
	// A failed write is not "written": the report says so, and the CLI exits non-zero.
	const once = oneRowPerSession(reports);
	const sessions = failed.size === 0 ? once : once.map((r) => (failed.has(r.sessionId) ? { ...r, written: false, failed: true } : r));
	return { sessions, unchangedFiles: sourceCount - todo.length, warnings, ...(read < todo.length ? { stopped: todo.length - read } : {}) };
}

/**
 * The files that have to be read. Fingerprints and checkpoint states cost a few system calls per
 * file: they are taken for all files at once. A state is taken before its file is read, so a file
 * that changes while it is read shows as changed next time. A file found unchanged with another
 * fingerprint (a copy, a touch) gets its checkpoint renewed in `fresh`.
 */
async function filesToRead(
	ports: IngestRunPorts,
	sources: readonly SessionSource[],
	skipUnchanged: boolean,
	fresh: Map<string, SourceCheckpoint>,
): Promise<Todo[]> {
	const fingerprints = await mapLimit(sources, STAT_CONCURRENCY, (s) => s.fingerprint?.().catch(() => undefined));
	let todo: Todo[] = sources.map((source, i) => ({ source, fingerprint: fingerprints[i], state: undefined }));
	if (skipUnchanged) todo = todo.filter((t) => t.fingerprint === undefined || ports.fingerprints.get(t.source.key) !== t.fingerprint);
	const checkpoints = ports.checkpoints;
	if (!checkpoints) return todo;
	if (skipUnchanged) {
		// A file whose fingerprint (size, mtime, inode, ctime) is the one its checkpoint recorded is
		// unchanged: no need to open it. (A copied workspace has new inodes: its files are checked
		// by their heads below, once, and their checkpoints take the new fingerprints.)
		todo = todo.filter((t) => {
			const checkpoint = t.source.stateKey !== undefined ? checkpoints.get(t.source.stateKey) : undefined;
			if (!checkpoint || checkpoint.stamp === undefined || checkpoint.stamp !== t.fingerprint || !ports.archiveExists(checkpoint)) return true;
			ports.fingerprints.set(t.source.key, t.fingerprint);
			return false;
		});
	}
	// Taken ahead only where it can spare a read (a checkpoint to compare with); the others'
	// states come from their reads (`SessionSource.read`), one open per file instead of two.
	const ahead = todo.filter((t) => t.source.stateKey === undefined || (skipUnchanged && checkpoints.has(t.source.stateKey)));
	const states = await mapLimit(ahead, STAT_CONCURRENCY, (t) => t.source.state?.().catch(() => undefined));
	ahead.forEach((t, i) => {
		t.state = states[i];
	});
	if (!skipUnchanged) return todo;
	return todo.filter((t) => {
		const checkpoint = t.state ? checkpoints.get(t.state.key) : undefined;
		if (!t.state || !checkpoint || !unchangedSince(checkpoint, t.state) || !ports.archiveExists(checkpoint)) return true;
		if (t.fingerprint !== undefined) {
			ports.fingerprints.set(t.source.key, t.fingerprint);
			// Unchanged, with another fingerprint (a copy, a touch): recorded, so the next process need not open it.
			fresh.set(t.state.key, { ...checkpoint, stamp: t.fingerprint });
		}
		return false;
	});
}

/** A file is as it was when ingested: same size, mtime and head. */
function unchangedSince(checkpoint: SourceCheckpoint, state: SourceState): boolean {
	return checkpoint.size === state.size && checkpoint.mtimeMs === state.mtimeMs && checkpoint.headHash === state.headHash;
}

/**
 * The history events of one file: the replay pipeline over its bytes. The pipeline (and RxJS)
 * is loaded on the first file read: a query that finds every file unchanged never loads it.
 */
export async function replayFile(source: SessionSource, onState?: (state: SourceState) => void, maxLineBytes?: number): Promise<HistoryEvent[]> {
	const { replayEvents } = await import("../ingest/replayEvents.ts");
	return replayEvents(source, onState, maxLineBytes !== undefined ? { maxLineBytes } : {});
}

/** The session a file's events are about, or `undefined` (no header and no id in its name, or an invalid id: said in `warnings`). */
export function sessionOfFile(source: SessionSource, events: readonly HistoryEvent[], warnings: string[]): string | undefined {
	const seen = events.find((e) => e.type === "SessionSeen");
	if (!seen) {
		if (events.length > 0) warnings.push(`${source.key}: no session header and no session id in the file name; ${events.length} line(s) rejected`);
		return undefined;
	}
	const sessionId = seen.session.sessionId;
	if (!isValidId(sessionId)) {
		warnings.push(`${source.key}: session id ${JSON.stringify(sessionId.slice(0, 80))} is not a valid id; file skipped`);
		return undefined;
	}
	return sessionId;
}

/**
 * One row per session: a session read from more than one file (the same session file in two named
 * folders, a copy beside the original) had a row per file, and the totals counted it twice. Its
 * counts are the archive's as the last of its files left it (each file's events are applied to the
 * archive the one before made); written when any was; its files' rejected lines added up.
 */
export function oneRowPerSession(reports: readonly SessionIngestReport[]): SessionIngestReport[] {
	const rows = new Map<string, SessionIngestReport>();
	for (const r of reports) {
		const before = rows.get(r.sessionId);
		rows.set(r.sessionId, before ? { ...r, written: before.written || r.written, rejectedLines: before.rejectedLines + r.rejectedLines } : r);
	}
	return [...rows.values()];
}

/** The counts an ingest reports for one session's archive. */
export function reportOf(archive: SessionArchive, events: readonly HistoryEvent[], written: boolean): SessionIngestReport {
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
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R> | undefined): Promise<(R | undefined)[]> {
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
