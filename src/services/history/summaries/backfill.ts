/**
 * Whose summaries a pass may make. The seed wants the discovered history summarized, but every
 * summary is a paid model call: a history of hundreds of sessions is thousands of calls. So the
 * current session's summaries always proceed, and the backlog of past sessions ("backfill") runs
 * only when it is small or the person agreed, once per workspace.
 */
import { CHUNK_SIZE } from "../model/hierarchy.ts";
import type { SessionText } from "../projections/text/sessionText.ts";

/** A backlog above this many calls is not started without the person's answer. */
export const DEFAULT_BACKFILL_THRESHOLD = 50;

/** What the workspace remembers (`.pi/pbot/settings.json`). */
export interface BackfillSettings {
	/** The person's answer: `on` makes past sessions' summaries, `off` only the current session's; absent = not asked. */
	readonly backfill?: "on" | "off";
	/** Calls above which the person is asked first. */
	readonly threshold: number;
}

/** Where the settings are kept (the workspace's `.pi/pbot/settings.json`, or memory in tests). */
export interface BackfillSettingsStore {
	load(): Promise<BackfillSettings>;
	/** Stores these fields over what is stored. */
	save(change: Partial<BackfillSettings>): Promise<void>;
}

/** One session's due summaries and an estimate of what making them reads. */
export interface SessionBacklog {
	readonly due: number;
	/** Characters the model would read for them (an estimate: see `backlogOf`). */
	readonly inputChars: number;
}

/**
 * Summaries due (pending or stale) per session that has any, from the sessions' projection heads
 * (with their rows), with an estimate of what making them reads: four times the session's average
 * Q&A text per call (a level-1 summary reads four Q&A; a higher one reads four summaries, shorter,
 * so this errs high).
 */
export function backlogOf(heads: Iterable<SessionText>): Map<string, SessionBacklog> {
	const backlog = new Map<string, SessionBacklog>();
	for (const head of heads) {
		const due = head.header.session.summariesDue ?? 0;
		if (due === 0) continue;
		let qa = 0;
		let bytes = 0;
		for (let row = 0; row < head.docs; row++) {
			if (head.level(row) !== 0) continue;
			const [from, to] = head.originalRange(row);
			qa++;
			bytes += to - from;
		}
		backlog.set(head.sessionId, { due, inputChars: qa === 0 ? 0 : Math.round((due * CHUNK_SIZE * bytes) / qa) });
	}
	return backlog;
}

/**
 * The backlog split into the current session's new summaries and the earlier work: the past
 * sessions' and what was already due in the current session when this process first saw it (a
 * long session resumed after installing pbot is earlier work too, not "new").
 */
export interface Backlog {
	readonly currentCalls: number;
	readonly pastCalls: number;
	/** Sessions with earlier work due (the current one counts when it has some). */
	readonly pastSessions: number;
	/** Input tokens the earlier work's calls would send, roughly (4 characters a token, plus each call's prompt). */
	readonly pastTokens: number;
}

/** What a pass does: everything due, only the current session's, or ask the person first. */
export type BackfillScope = "all" | "current" | "ask";

/** Characters per token for the estimate shown to a person (the usual English figure; CJK text is denser). */
const CHARS_PER_TOKEN = 4;
/** Tokens of system prompt and framing each call sends besides its input. */
const PROMPT_TOKENS_PER_CALL = 250;

/** `earlierInCurrent`: of the current session's due summaries, how many were due before this process started on it. */
export function splitBacklog(backlog: ReadonlyMap<string, SessionBacklog>, currentSessionId: string | undefined, earlierInCurrent = 0): Backlog {
	let currentCalls = 0;
	let pastCalls = 0;
	let pastSessions = 0;
	let pastChars = 0;
	for (const [id, b] of backlog) {
		if (b.due === 0) continue;
		const earlier = id === currentSessionId ? Math.min(b.due, earlierInCurrent) : b.due;
		currentCalls += b.due - earlier;
		if (earlier === 0) continue;
		pastCalls += earlier;
		pastSessions++;
		pastChars += (b.inputChars * earlier) / b.due;
	}
	return { currentCalls, pastCalls, pastSessions, pastTokens: Math.round(pastChars / CHARS_PER_TOKEN) + pastCalls * PROMPT_TOKENS_PER_CALL };
}

/**
 * The scope of the next pass: the person's stored answer if there is one; otherwise everything
 * when the past sessions' backlog is at most the threshold, and "ask" when it is above.
 */
export function backfillScope(backlog: Backlog, settings: BackfillSettings): BackfillScope {
	if (settings.backfill === "on") return "all";
	if (settings.backfill === "off") return "current";
	return backlog.pastCalls <= settings.threshold ? "all" : "ask";
}

/** "1,649 summaries in 212 sessions (about 2.1M input tokens)": the earlier work as a person reads it. */
export function describeBacklog(backlog: Backlog): string {
	const calls = `${backlog.pastCalls.toLocaleString("en-US")} ${backlog.pastCalls === 1 ? "summary" : "summaries"}`;
	const sessions = `${backlog.pastSessions.toLocaleString("en-US")} ${backlog.pastSessions === 1 ? "session" : "sessions"}`;
	return `${calls} in ${sessions} (about ${compactTokens(backlog.pastTokens)} input tokens)`;
}

function compactTokens(n: number): string {
	if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
	if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
	return n.toLocaleString("en-US");
}
