import type { Stats } from "node:fs";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { Subscription } from "rxjs";
import type { BackfillSettingsStore, SessionBacklog } from "../../../services/history/summaries/backfill.ts";
import { LiveIngest } from "../../../services/history/service/liveIngest.ts";
import { runSummaryPass, type SummaryPassReport } from "../../../services/history/summaries/summaryWorker.ts";
import { workspaceSettingsStore } from "../../../storage/history-files/settingsFile.ts";
import { BackfillPermission, type BackfillQuestion, earlierSummaryIds, sessionOnly } from "./backfillQuestion.ts";
import { piSummaryModel, type ModelAuth } from "./piSummaryModel.ts";
import { ProgressStatus } from "./progressStatus.ts";
import type { HistoryService } from "../../../services/history/service/historyService.ts";
import { fileDiscovery } from "./discovery.ts";
import { FolderWatch } from "./folderWatch.ts";
import { discoveryOptionsOf, type PiSessionFacts } from "./piSession.ts";
import { fingerprintOf, sourceState } from "./sessionFiles.ts";
import { tailSessionFile } from "./tailSessionFile.ts";
import type { MigrationReport } from "./workspaceMigration.ts";
import { createWorkspaceHistory } from "./workspaceHistory.ts";
import { sessionIdFromFileName } from "../../../services/history/model/sessionFileName.ts";

/**
 * pbot's state inside one Pi process: the history service of the current workspace and the live
 * tail of the current session file. It holds plain data only (see `PiSessionFacts`), so nothing
 * it does in the background can touch a stale Pi context.
 */
export class HistoryRuntime {
	private service: HistoryService | undefined;
	private workspace: string | undefined;
	private facts: PiSessionFacts | undefined;
	private tail: Subscription | undefined;
	private tailedFile: string | undefined;
	/** The session folders discovery looks at, watched: a later refresh looks only at the files reported changed. */
	private readonly folders = new FolderWatch();
	/** Reads what was appended to the tailed file now (`TailOptions.readNow`). */
	private readTail: (() => Promise<Stats | undefined>) | undefined;
	/** An agent run is in progress (`agent_start` to `agent_end`): the tail reads only when asked (`TailOptions.holdWhile`). */
	private running = false;
	/** Problems seen in the background, for the next command or tool result to mention. */
	private readonly problems: string[] = [];
	/** The live ingests of the tails followed in this process (a switch starts another; the old one's writes may still land). */
	private readonly live = new Set<LiveIngest>();
	/** Checkpoints of the tailed file being saved (`tailCaughtUp`). */
	private readonly checkpointing = new Set<Promise<void>>();
	/** The ingest running in the background, if any. */
	private pending: Promise<void> = Promise.resolve();
	/** The summary pass in flight: one at a time, cancelled by new input, a switch or shutdown. */
	private summarizing: { readonly controller: AbortController; readonly done: Promise<SummaryPassReport | undefined> } | undefined;
	private summaryTimer: NodeJS.Timeout | undefined;
	/** The last "why nothing runs" said in the status line, so it is said once. */
	private lastIdleReason: string | undefined;
	/** Long work's progress, in Pi's footer (set at each session start); nowhere without a UI. */
	private readonly progress = new ProgressStatus();
	/** Whether a pass may make past sessions' summaries; asks the person at most once per workspace. */
	private readonly backfill = new BackfillPermission();
	/**
	 * When each session started in this process. A summary of it over Q&A that had all ended by
	 * then is earlier work, like a past session's (a long session resumed after pbot was
	 * installed); only what it covers from then on is the session's own new work, made without asking.
	 */
	private readonly sessionStarts = new Map<string, number>();

	/** @param settingsOf where a workspace's settings are kept (tests pass memory) */
	constructor(private readonly settingsOf: (workspace: string) => BackfillSettingsStore = workspaceSettingsStore) {}

	/** The settings of the current workspace (`/pbot summaries` reads and changes them). */
	settingsFor(facts: PiSessionFacts): BackfillSettingsStore {
		return this.settingsOf(facts.cwd);
	}

	/** Discovery as the current session sees it (`this.facts` changes with a switch), watching its folders. */
	private discovery(facts: PiSessionFacts) {
		return fileDiscovery({ ...discoveryOptionsOf(this.facts ?? facts), watch: this.folders });
	}

	/** The service for a session's workspace (made on first use, kept across session switches in it). */
	serviceFor(facts: PiSessionFacts): HistoryService {
		this.facts = facts;
		if (!this.service || this.workspace !== facts.cwd) {
			this.workspace = facts.cwd;
			// Discovery reads `this.facts` at every call: a session switch changes the current file.
			this.service = createWorkspaceHistory({
				workspace: facts.cwd,
				agentDir: facts.agentDir,
				discovery: {
					discover: () => this.discovery(facts).discover(),
					changedSince: () => this.discovery(facts).changedSince?.() ?? Promise.resolve(undefined),
				},
				...(facts.sessionDir ? { sessionDirs: [facts.sessionDir] } : {}),
				progress: (work, done, total) => this.progress.show(work, done, total),
				onWait: (holder) => this.progress.waiting(holder),
				onMigration: (report, error) => {
					if (error) this.problems.push(`migration from the old location failed: ${error.message}`);
					else if (report) this.problems.push(...migrationNotes(report));
				},
			});
		}
		return this.service;
	}

	/**
	 * `session_start`: follow the current file and ingest what is there, in the background (a
	 * large history must not hold up Pi's start; a query waits for it anyway, see `refresh`).
	 * `status` shows the progress of long work (reading many files, making search text again).
	 */
	start(facts: PiSessionFacts, status?: (text: string | undefined) => void): void {
		this.progress.showIn(status);
		const service = this.serviceFor(facts);
		if (!this.sessionStarts.has(facts.sessionId)) this.sessionStarts.set(facts.sessionId, Date.now());
		// Then, in the background, what the first search needs beyond the ingest (the projection's
		// heads). The tail reads the current file whole as it starts: the ingest need not read it too.
		// Its folder watcher starts after that work (see `TailOptions.watchFrom`).
		const startWork = this.pending
			.then(() => this.tailCaughtUp(service))
			.then(() => this.ingest(service))
			.then(() => this.warm(service));
		this.follow(facts, startWork);
		this.pending = startWork;
	}

	private async warm(service: HistoryService): Promise<void> {
		try {
			await service.warm();
		} catch (err) {
			this.problems.push(`search text: ${(err as Error).message}`);
		}
	}

	/**
	 * The due summaries of the current session that are earlier work (see `sessionStarts`), given
	 * the workspace's `backlog`; its archive is brought into memory when anything of it is due (a
	 * pass would read it anyway).
	 */
	async earlierWork(facts: PiSessionFacts, backlog: ReadonlyMap<string, SessionBacklog>): Promise<ReadonlySet<string>> {
		if (!backlog.has(facts.sessionId)) return new Set();
		const since = this.sessionStarts.get(facts.sessionId) ?? Date.now();
		return earlierSummaryIds(await this.serviceFor(facts).loadSessions([facts.sessionId]), facts.sessionId, since);
	}

	/**
	 * `agent_start`: until the run ends, what it appends to the session file is read when a query
	 * needs it (`forQuery`) or when the run ends (`refresh`), not at each message.
	 */
	agentStarted(): void {
		this.running = true;
	}

	/** `agent_end` (in the background): pick up what changed, the run's messages first. */
	refresh(facts: PiSessionFacts): Promise<void> {
		this.running = false;
		const service = this.serviceFor(facts);
		this.pending = this.pending.then(() => this.tailCaughtUp(service)).then(() => this.ingest(service));
		return this.pending;
	}

	/**
	 * The service for a query (the tool, the command): first the current session file is read to
	 * its end by the live tail, so the query's refresh need not read that whole file again. In a
	 * long session every search after an exchange had re-read it (a 30 MB session: 250–430 ms a
	 * search, against 75 with nothing appended).
	 */
	async forQuery(facts: PiSessionFacts): Promise<HistoryService> {
		const service = this.serviceFor(facts);
		await this.tailCaughtUp(service);
		return service;
	}

	/**
	 * Has the tail read the current file to its end, and tells the service (`appliedLive`) when it
	 * did: with the file's checkpoint state when the file is still as the tail read it, so other
	 * processes can skip it once its archive is written (saved in the background; `settled` waits).
	 */
	private async tailCaughtUp(service: HistoryService): Promise<void> {
		const read = this.readTail;
		const file = this.tailedFile;
		const sessionId = this.facts?.sessionId;
		if (!read || !file) return;
		const stat = await read();
		if (!stat || this.readTail !== read) return;
		// (The key discovery gives the file: its path, which `sessionFactsOf` resolved against the workspace.)
		const state = await sourceState(file).catch(() => undefined);
		const same = state !== undefined && state.size === stat.size && state.mtimeMs === stat.mtimeMs;
		const saved = service.appliedLive(file, fingerprintOf(stat), same && sessionId ? { state, sessionId } : undefined);
		this.checkpointing.add(saved);
		void saved.finally(() => this.checkpointing.delete(saved));
	}

	/** Resolves when the background ingest queued so far, the live updates in flight and their checkpoints are done. */
	async settled(): Promise<void> {
		await this.pending;
		await Promise.all([...this.live].map((l) => l.settled()));
		await Promise.all([...this.checkpointing]);
	}

	/**
	 * After an interaction ended normally and Pi is idle: make the due summaries of every
	 * discovered session, one call at a time, with the model current in Pi. Does nothing when a pass
	 * is already running. `setStatus` shows progress in Pi's footer (and is cleared at the end).
	 *
	 * The current session's summaries always proceed. Past sessions' ("backfill") proceed when the
	 * workspace said yes, or when they are at most the threshold; above it, `ask` puts the question
	 * to the person before any call (once: the answer is kept in the workspace). Without `ask`
	 * (print mode) or without an answer, only the current session's are made.
	 */
	summarize(
		facts: PiSessionFacts,
		model: Model<Api> | undefined,
		auth: ModelAuth | { readonly error: string },
		setStatus: (text: string | undefined) => void,
		ask?: BackfillQuestion,
	): Promise<SummaryPassReport | undefined> {
		if (this.summarizing) return this.summarizing.done;
		const status = (text: string | undefined) => {
			try {
				setStatus(text);
			} catch {
				// a stale Pi context after a switch: the status no longer matters
			}
		};
		const reason = !model ? "no model selected" : "error" in auth ? `no auth for ${model.provider}/${model.id}: ${auth.error}` : undefined;
		if (reason !== undefined || !model || "error" in auth) {
			if (reason !== this.lastIdleReason) status(`pbot: summaries paused (${reason})`);
			this.lastIdleReason = reason;
			return Promise.resolve(undefined);
		}
		if (this.lastIdleReason !== undefined) status(undefined);
		this.lastIdleReason = undefined;
		const service = this.serviceFor(facts);
		const controller = new AbortController();
		const done = (async () => {
			try {
				await this.pending; // originals first: the worker plans from what was ingested
				// One catch-up of the projection per pass: the backlog serves the question and the loading.
				const backlog = await service.summaryBacklog();
				const earlier = await this.earlierWork(facts, backlog);
				const all = await this.backfill.allowed({
					settings: this.settingsFor(facts),
					workspace: facts.cwd,
					currentSessionId: facts.sessionId,
					earlierInCurrent: earlier.size,
					backlog,
					ask,
					signal: controller.signal,
					problem: (text) => this.problems.push(text),
				});
				if (controller.signal.aborted) return undefined;
				const only = all ? undefined : (id: string) => id === facts.sessionId;
				// The archives with summaries due, not the whole history.
				await service.loadSessions(all ? backlog.keys() : backlog.has(facts.sessionId) ? [facts.sessionId] : []);
				return await runSummaryPass(
					service.summaryTarget(only ? (state) => sessionOnly(state, facts.sessionId, earlier) : undefined),
					piSummaryModel(model, auth),
					controller.signal,
					{
						onProgress: (made, total) => status(`pbot: summaries ${made}/${total}`),
					},
				);
			} catch (err) {
				this.problems.push(`summaries: ${(err as Error).message}`);
				return undefined;
			} finally {
				status(undefined);
				if (this.summarizing?.controller === controller) this.summarizing = undefined;
			}
		})();
		this.summarizing = { controller, done };
		return done;
	}

	/** Runs `start` once Pi is idle (a timer after `agent_end`); a cancel before then drops it. */
	scheduleSummaries(start: () => void): void {
		clearTimeout(this.summaryTimer);
		this.summaryTimer = setTimeout(() => {
			this.summaryTimer = undefined;
			start();
		}, 0);
	}

	/** New input, a session switch or fork, shutdown: abort the summary in flight (it stays pending). */
	cancelSummaries(): void {
		clearTimeout(this.summaryTimer);
		this.summaryTimer = undefined;
		this.summarizing?.controller.abort();
	}

	/** Resolves when the summary pass in flight (if any) has stopped. */
	async summariesSettled(): Promise<void> {
		await this.summarizing?.done;
	}

	/** `session_shutdown`: stop everything that runs in the background. */
	stop(): void {
		this.cancelSummaries();
		this.running = false;
		this.tail?.unsubscribe();
		this.tail = undefined;
		this.tailedFile = undefined;
		this.readTail = undefined;
		// (Watched again by the next full discovery: a switch may change the folders.)
		this.folders.close();
	}

	/** Whether a tail is running (for tests: nothing may be left behind). */
	get following(): string | undefined {
		return this.tailedFile;
	}

	/** Background problems since the last call, then forgotten. */
	takeProblems(): string[] {
		return this.problems.splice(0);
	}

	private follow(facts: PiSessionFacts, watchFrom: Promise<unknown>): void {
		if (facts.sessionFile === this.tailedFile) return;
		this.stop();
		const file = facts.sessionFile;
		if (!file) return; // --no-session: nothing is written, nothing to follow
		const service = this.serviceFor(facts);
		const fallback = sessionIdFromFileName(file);
		this.tailedFile = file;
		const live = new LiveIngest(service, {
			onUpdateError: (err) => this.problems.push(`live update: ${err.message}`),
			onTailError: (err) => this.problems.push(`live tail stopped: ${err.message}`),
		});
		this.live.add(live);
		this.tail = live.follow(
			tailSessionFile(file, {
				...(fallback ? { fallbackSessionId: fallback } : {}),
				readNow: (read) => {
					this.readTail = read;
				},
				watchFrom,
				holdWhile: () => this.running,
				onError: (err) => this.problems.push(`live tail: ${err.message}`),
			}),
		);
	}

	private async ingest(service: HistoryService): Promise<void> {
		try {
			const report = await service.refresh();
			this.problems.push(...report.warnings);
		} catch (err) {
			this.problems.push(`ingest: ${(err as Error).message}`);
		}
	}
}

/** What a person should hear about a migration: copies made and records that could not be read. */
function migrationNotes(report: MigrationReport): string[] {
	const notes: string[] = [];
	if (report.copied.length > 0) notes.push(`copied ${report.copied.length} archive(s) of this workspace from the old location (the old copies stay)`);
	for (const problem of report.problems) notes.push(`old archive: ${problem}`);
	return notes;
}
