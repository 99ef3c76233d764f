import type { ArchiveState } from "../../../services/history/projections/archive.ts";
import {
	backfillScope,
	type Backlog,
	type BackfillSettings,
	type BackfillSettingsStore,
	describeBacklog,
	type SessionBacklog,
	splitBacklog,
} from "../../../services/history/summaries/backfill.ts";

/** The backfill question put to the person: `on`/`off` is their answer (kept), `undefined` none (dismissed, timed out). */
export type BackfillQuestion = (
	question: {
		readonly title: string;
		/** The earlier work in a few words ("6 summaries in 3 sessions (about 1,750 input tokens)"). */
		readonly what: string;
		readonly backlog: Backlog;
		readonly threshold: number;
	},
	signal: AbortSignal,
) => Promise<"on" | "off" | undefined>;

/** What deciding one pass's backfill needs from the runtime. */
export interface BackfillCase {
	/** The workspace's settings (its stored answer and threshold). */
	readonly settings: BackfillSettingsStore;
	readonly workspace: string;
	readonly currentSessionId: string;
	/** Of the current session's due summaries, how many are earlier work (due before this process started on it). */
	readonly earlierInCurrent: number;
	/** Summaries due per session (`HistoryService.summaryBacklog`). */
	readonly backlog: ReadonlyMap<string, SessionBacklog>;
	/** How to ask the person; absent in print mode. */
	readonly ask: BackfillQuestion | undefined;
	readonly signal: AbortSignal;
	/** A problem for the next command or tool result to mention. */
	readonly problem: (text: string) => void;
}

/**
 * Whether a summary pass may make past sessions' summaries ("backfill", see `summaries/backfill.ts`):
 * when the workspace said yes, or when the backlog is at most the threshold; above it, the person
 * is asked before any call. The question is asked at most once per workspace and process (this
 * object is the process's); a stored answer is never asked again.
 */
export class BackfillPermission {
	/** Workspaces whose backfill question went unanswered in this process: not asked again until the next one. */
	private readonly unanswered = new Set<string>();

	async allowed(c: BackfillCase): Promise<boolean> {
		let stored: BackfillSettings;
		try {
			stored = await c.settings.load();
		} catch (err) {
			c.problem(`settings: ${(err as Error).message}; only this session's summaries are made`);
			return false;
		}
		const backlog = splitBacklog(c.backlog, c.currentSessionId, c.earlierInCurrent);
		const scope = backfillScope(backlog, stored);
		if (scope !== "ask") return scope === "all";
		if (!c.ask || this.unanswered.has(c.workspace)) return false;
		const answer = await c.ask(
			{
				title: `pbot: summarize earlier work? ${describeBacklog(backlog)}`,
				what: describeBacklog(backlog),
				backlog,
				threshold: stored.threshold,
			},
			c.signal,
		);
		if (answer === undefined) {
			// Dismissed, "Not now" or timed out: asked again by the next Pi process (the dialog said why).
			if (!c.signal.aborted) this.unanswered.add(c.workspace);
			return false;
		}
		await c.settings.save({ backfill: answer });
		return answer === "on";
	}
}

/**
 * The archives of one session only, without its earlier work (`earlier`: summary ids due before
 * this process started on it): a pass that must not make earlier work sees nothing else.
 */
export function sessionOnly(state: ArchiveState, sessionId: string, earlier: ReadonlySet<string> = new Set()): ArchiveState {
	const archive = state.sessions[sessionId];
	if (!archive) return { sessions: {} };
	if (earlier.size === 0) return { sessions: { [sessionId]: archive } };
	const summaries = Object.fromEntries(Object.entries(archive.summaries).filter(([id]) => !earlier.has(id)));
	return { sessions: { [sessionId]: { ...archive, summaries } } };
}

/**
 * A session's earlier work: its due summaries (pending, or stale) over Q&A that had all ended
 * before `sinceMs` (when the session started in this process). One reaching past it is new work.
 */
export function earlierSummaryIds(state: ArchiveState, sessionId: string, sinceMs: number): Set<string> {
	const archive = state.sessions[sessionId];
	const ids = new Set<string>();
	if (!archive) return ids;
	for (const s of Object.values(archive.summaries)) if ((s.status === "pending" || s.stale === true) && Date.parse(s.endedAt) < sinceMs) ids.add(s.id);
	return ids;
}
