import { defaultIfEmpty, lastValueFrom } from "rxjs";
import { applyArchiveEvents, archiveEvents, initialArchiveState, type ArchiveState, type SessionArchive } from "./archive.ts";
import type { HistoryEvent } from "./events.ts";
import { isValidId } from "./ids.ts";
import type { ArchiveStore, SessionDiscovery, SessionSource } from "./ports.ts";
import { buildQueryView, type QueryView } from "./queryView.ts";
import { sessionPipeline } from "./sessionPipeline.ts";

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

	/** The current query view (built on demand, reusing unchanged sessions). */
	getView(): QueryView {
		if (!this.view || this.view.state !== this.state) this.view = buildQueryView(this.state, this.view);
		return this.view;
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
