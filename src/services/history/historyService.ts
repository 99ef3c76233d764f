import { defaultIfEmpty, lastValueFrom } from "rxjs";
import { applyArchiveEvents, archiveEvents, initialArchiveState, type ArchiveState, type SessionArchive } from "./archive.ts";
import type { HistoryEvent } from "./events.ts";
import { isValidId } from "./ids.ts";
import type { ArchiveStore, SessionDiscovery, SessionSource } from "./ports.ts";
import { buildQueryView, type QueryView } from "./queryView.ts";
import { sessionPipeline } from "./sessionPipeline.ts";
import { listSessions, readNode, searchHistory } from "./query/index.ts";
import type { ReadParams, ReadResult, SearchParams, SearchResult, SessionListResult, SessionsParams } from "./query/index.ts";

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
}

export interface IngestReport {
	readonly sessions: readonly SessionIngestReport[];
	/** Files skipped and why, for a person to read (empty or unwritten files are skipped silently). */
	readonly warnings: readonly string[];
}

export interface HistoryServiceOptions {
	readonly store: ArchiveStore;
	readonly discovery: SessionDiscovery;
}

/**
 * The one service behind the CLI, the slash command and the tool: it ingests the workspace's
 * sessions into archives and keeps the query view. It does no I/O of its own; the store and the
 * discovery it is given do.
 */
export class HistoryService {
	private state: ArchiveState = initialArchiveState();
	private view: QueryView | undefined;
	private loaded = false;
	private readonly warnings: string[] = [];
	/** Fingerprint of each source as last ingested: unchanged files are not read again. */
	private readonly fingerprints = new Map<string, string>();

	constructor(private readonly options: HistoryServiceOptions) {}

	/** Loads every stored archive (once). Damaged archives are reported, not fatal. */
	async load(): Promise<void> {
		if (this.loaded) return;
		const events: HistoryEvent[] = [];
		for (const id of await this.options.store.list()) {
			try {
				const archive = await this.options.store.read(id);
				if (archive) events.push(...archiveEvents(archive));
			} catch (err) {
				this.warnings.push(`archive ${id}: ${(err as Error).message}`);
			}
		}
		this.state = applyArchiveEvents(this.state, events);
		this.loaded = true;
	}

	/** Reads every discovered session file and updates the archives that changed. */
	async ingest(): Promise<IngestReport> {
		return this.ingestSources(false);
	}

	/**
	 * Picks up what changed since the last ingest: files whose fingerprint is unchanged are not
	 * read again, so a refresh with nothing new costs a folder listing and a `stat` per file.
	 * What every query calls first.
	 */
	async refresh(): Promise<IngestReport> {
		return this.ingestSources(true);
	}

	private async ingestSources(skipUnchanged: boolean): Promise<IngestReport> {
		await this.load();
		const { sources, warnings: discoveryWarnings } = await this.options.discovery.discover();
		const warnings = [...this.warnings.splice(0), ...discoveryWarnings];
		const reports: SessionIngestReport[] = [];
		for (const source of sources) {
			try {
				const fingerprint = await source.fingerprint?.();
				if (skipUnchanged && fingerprint !== undefined && this.fingerprints.get(source.key) === fingerprint) continue;
				const report = await this.ingestSource(source, warnings);
				if (report) reports.push(report);
				if (fingerprint !== undefined) this.fingerprints.set(source.key, fingerprint);
			} catch (err) {
				warnings.push(`${source.key}: ${(err as Error).message}`);
			}
		}
		return { sessions: reports, warnings };
	}

	/**
	 * Applies events from elsewhere (the live tail of the current session file) and writes the
	 * archives they changed.
	 */
	async applyEvents(events: readonly HistoryEvent[]): Promise<void> {
		await this.load();
		const sessionIds = new Set<string>();
		for (const e of events) {
			const id = e.type === "SessionSeen" ? e.session.sessionId : e.type === "QaObserved" ? e.node.sessionId : e.type === "SummaryPlanned" ? e.plan.sessionId : e.sessionId;
			if (id !== undefined && isValidId(id)) sessionIds.add(id);
		}
		const before = this.state;
		this.state = applyArchiveEvents(this.state, events.filter((e) => e.type !== "LineRejected" || e.sessionId !== undefined));
		for (const id of sessionIds) {
			const after = this.state.sessions[id];
			if (after && after !== before.sessions[id]) await this.options.store.write(after);
		}
	}

	/** The current query view (built on demand, reusing unchanged sessions). */
	getView(): QueryView {
		if (!this.view || this.view.state !== this.state) this.view = buildQueryView(this.state, this.view);
		return this.view;
	}

	/** The archives as they stand in memory (what the summary worker reads). */
	archiveState(): ArchiveState {
		return this.state;
	}

	/** The archive of a session as it stands in memory. */
	getArchive(sessionId: string): SessionArchive | undefined {
		return this.state.sessions[sessionId];
	}

	private async ingestSource(source: SessionSource, warnings: string[]): Promise<SessionIngestReport | undefined> {
		const events = await lastValueFrom(
			source.read().pipe(
				sessionPipeline({ mode: "replay", ...(source.fallbackSessionId ? { fallbackSessionId: source.fallbackSessionId } : {}) }),
				defaultIfEmpty([] as HistoryEvent[]),
			),
		);
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
		const before = this.state.sessions[sessionId];
		this.state = applyArchiveEvents(this.state, events);
		const after = this.state.sessions[sessionId] as SessionArchive;
		const written = after !== before;
		if (written) await this.options.store.write(after);
		return reportOf(after, events, written);
	}

	/** The workspace's sessions, newest first (fresh: picks up changed session files first). */
	async sessions(params: SessionsParams = {}): Promise<SessionListResult> {
		await this.refresh();
		return listSessions(this.getView(), params);
	}

	/** The tool's `search` (fresh). Throws `QueryError` for bad parameters. */
	async search(params: SearchParams = {}): Promise<SearchResult | SessionListResult> {
		await this.refresh();
		return searchHistory(this.getView(), params);
	}

	/** The tool's `read` (fresh). Throws `QueryError` for a bad or unknown id or bad paging. */
	async read(params: ReadParams): Promise<ReadResult> {
		await this.refresh();
		return readNode(this.getView(), params);
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
