import type { ArchiveState } from "../projections/archive.ts";
import type { HistoryEvent, SummaryUsage } from "../model/events.ts";
import { MERGE_SEGMENTS_SYSTEM, PROMPT_VERSION, SUMMARIZE_QA_SYSTEM, SUMMARIZE_SUMMARIES_SYSTEM } from "./prompts.ts";
import { dueCount, pendingWork, type WorkItem } from "./pendingWork.ts";
import { segmentInput } from "./segmentInput.ts";
import { inputHashOf, summaryInputUnits } from "./summaryInput.ts";
import type { SummaryModel, SummaryReply } from "./summaryModel.ts";

/** Where the worker reads state from and writes its results to (the history service). */
export interface SummaryTarget {
	state(): ArchiveState;
	applyEvents(events: readonly HistoryEvent[]): Promise<void>;
	/**
	 * Asked before the first summary of a session in a pass: true when this process may make the
	 * session's summaries (its state then brought up to date with what other processes stored),
	 * false when another process is making them (the pass leaves the session to it). Absent: always yes.
	 */
	claim?(sessionId: string): Promise<boolean>;
	/** Gives up the claim of a session with nothing more due in this pass (another process's new work there is its own again). */
	release?(sessionId: string): Promise<void>;
	/** Gives up the pass's claims (at its end, however it ends). */
	releaseClaims?(): Promise<void>;
}

/** Attempts per summary in one pass before it is left for the next pass, unless a pass is told otherwise. */
export const MAX_ATTEMPTS_PER_SUMMARY = 2;

export interface SummaryPassOptions {
	/** Attempts per summary in one pass before it is left for the next pass (default `MAX_ATTEMPTS_PER_SUMMARY`). */
	readonly maxAttemptsPerSummary?: number;
	/** Called after every summary made or failed: made so far, and how many were due at the start. */
	readonly onProgress?: (done: number, total: number) => void;
	/** The clock for provenance (tests pin it). */
	readonly now?: () => Date;
	/** Called after every failed attempt, with its error (the CLI says a new one at once). */
	readonly onFailure?: (error: string) => void;
	/**
	 * A pass that has made nothing stops once this many attempts in a row failed with one error (a
	 * wrong key, no network: every call would fail the same way, two attempts per summary); the
	 * summaries stay due. Default `GIVE_UP_AFTER`.
	 */
	readonly giveUpAfter?: number;
}

/** See `SummaryPassOptions.giveUpAfter`. */
export const GIVE_UP_AFTER = 4;

/** One error a pass's failed attempts gave, and how many gave it. */
export interface SummaryPassError {
	readonly message: string;
	readonly count: number;
}

export interface SummaryPassReport {
	readonly made: number;
	/** Failed attempts: a failing summary is tried up to `maxAttemptsPerSummary` times in a pass, each counted. */
	readonly failed: number;
	/** Summaries whose last attempt in this pass failed (they stay due). */
	readonly failedSummaries: number;
	/** The failed attempts' errors, one entry per message, in the order they first came (the first is the first failure's). */
	readonly errors: readonly SummaryPassError[];
	readonly calls: number;
	/** True when the pass was cancelled; the summary in flight stays as it was. */
	readonly aborted: boolean;
	/** Due summaries left (waiting for children, failing, or not reached). */
	readonly remaining: number;
	/** Of those, the ones in sessions another process was summarizing (left to it: see `SummaryTarget.claim`). */
	readonly leftToOthers: number;
	/** The pass stopped early: nothing made, and its first attempts all failed with one error (`giveUpAfter`). */
	readonly gaveUp?: true;
}

/** Characters per token assumed when fitting input to a context window (low on purpose: CJK text is dense). */
const CHARS_PER_TOKEN = 3;
/** Tokens kept free for the system prompt and the framing of the user message. */
const PROMPT_MARGIN_TOKENS = 600;

/**
 * One pass of the summary worker: makes every due summary it can, one model call at a time, lowest
 * level first, oldest first. A summary over summaries is made after its children, in the same pass.
 * An abort (new input, session switch, shutdown) stops the pass at once and stores nothing for the
 * summary in flight. A failure is recorded on the summary, which stays pending; after
 * `maxAttemptsPerSummary` failures in this pass it is left for the next one.
 */
export async function runSummaryPass(
	target: SummaryTarget,
	model: SummaryModel,
	signal: AbortSignal,
	options: SummaryPassOptions = {},
): Promise<SummaryPassReport> {
	const maxAttempts = options.maxAttemptsPerSummary ?? MAX_ATTEMPTS_PER_SUMMARY;
	const now = options.now ?? (() => new Date());
	const total = dueCount(target.state());
	const attempts = new Map<string, number>();
	const skip = new Set<string>();
	let made = 0;
	let failed = 0;
	let calls = 0;
	const countCall = () => void calls++;
	/** Summaries whose last attempt failed; the count of each error message. */
	const failing = new Set<string>();
	const errors = new Map<string, number>();
	const failures = (): Pick<SummaryPassReport, "failedSummaries" | "errors"> => ({
		failedSummaries: failing.size,
		errors: [...errors].map(([message, count]) => ({ message, count })),
	});
	// Said before the first call, which may take a while: the footer shows 0/N, not nothing.
	if (total > 0) options.onProgress?.(0, total);

	/** Sessions this pass may summarize, and those another process is summarizing. */
	const claimed = new Set<string>();
	const elsewhere = new Set<string>();
	try {
		while (!signal.aborted) {
			const next = pendingWork(target.state(), skip).find((item) => !elsewhere.has(item.sessionId));
			if (!next) break;
			if (target.claim && !claimed.has(next.sessionId)) {
				// Claimed: the state may now hold what another process made; pick again.
				if (await target.claim(next.sessionId)) claimed.add(next.sessionId);
				else elsewhere.add(next.sessionId);
				continue;
			}
			const result = await makeSummary(target.state(), next, model, signal, countCall);
			if (result.kind === "aborted" || signal.aborted) return { made, failed, ...failures(), calls, aborted: true, ...left(target.state(), elsewhere) };
			if (result.kind === "skip") {
				skip.add(next.summary.id);
				continue;
			}
			if (result.kind === "error") {
				failed++;
				failing.add(next.summary.id);
				errors.set(result.error, (errors.get(result.error) ?? 0) + 1);
				const n = (attempts.get(next.summary.id) ?? 0) + 1;
				attempts.set(next.summary.id, n);
				if (n >= maxAttempts) skip.add(next.summary.id);
				await target.applyEvents([{ type: "SummaryFailed", sessionId: next.sessionId, id: next.summary.id, error: result.error, at: now().toISOString() }]);
				options.onFailure?.(result.error);
				if (made === 0 && errors.size === 1 && failed >= (options.giveUpAfter ?? GIVE_UP_AFTER)) {
					options.onProgress?.(made, total);
					return { made, failed, ...failures(), calls, aborted: false, gaveUp: true, ...left(target.state(), elsewhere) };
				}
			} else {
				made++;
				failing.delete(next.summary.id);
				await target.applyEvents([
					{
						type: "SummaryReady",
						sessionId: next.sessionId,
						id: next.summary.id,
						text: result.text,
						model: model.id,
						at: now().toISOString(),
						promptVersion: PROMPT_VERSION,
						inputHash: result.inputHash,
						...(result.usage ? { usage: result.usage } : {}),
					},
				]);
			}
			options.onProgress?.(made, total);
			// Done with this session for now: not kept from another process for the rest of the pass.
			if (claimed.has(next.sessionId) && target.release && !pendingWork(target.state(), skip).some((item) => item.sessionId === next.sessionId)) {
				claimed.delete(next.sessionId);
				await target.release(next.sessionId);
			}
		}
	} finally {
		await target.releaseClaims?.();
	}
	return { made, failed, ...failures(), calls, aborted: signal.aborted, ...left(target.state(), elsewhere) };
}

/** What a pass leaves due: in all, and in the sessions it left to another process. */
function left(state: ArchiveState, elsewhere: ReadonlySet<string>): Pick<SummaryPassReport, "remaining" | "leftToOthers"> {
	let leftToOthers = 0;
	for (const id of elsewhere) {
		const archive = state.sessions[id];
		if (archive) leftToOthers += dueCount({ sessions: { [id]: archive } });
	}
	return { remaining: dueCount(state), leftToOthers };
}

type MakeResult =
	| { kind: "ok"; text: string; inputHash: string; usage?: SummaryUsage }
	| { kind: "aborted" }
	| { kind: "error"; error: string }
	| { kind: "skip" };

/** Makes one summary: prepare its input (pure), then call the model once, or per segment and once more to merge. */
async function makeSummary(state: ArchiveState, item: WorkItem, model: SummaryModel, signal: AbortSignal, countCall: () => void): Promise<MakeResult> {
	const archive = state.sessions[item.sessionId];
	const units = archive ? summaryInputUnits(archive, item.summary) : undefined;
	if (!units) return { kind: "skip" };
	const inputHash = inputHashOf(units);
	const system = item.summary.level === 1 ? SUMMARIZE_QA_SYSTEM : SUMMARIZE_SUMMARIES_SYSTEM;
	const budgetTokens = model.contextWindow - model.maxOutputTokens - PROMPT_MARGIN_TOKENS;
	const maxChars = Math.max(200, budgetTokens * CHARS_PER_TOKEN);
	const segments = segmentInput(units, maxChars);
	const usage = { input: 0, output: 0, totalTokens: 0 };
	const call = async (sys: string, user: string): Promise<SummaryReply> => {
		countCall();
		const reply = await model.complete({ system: sys, user }, signal);
		if (reply.kind === "ok" && reply.usage) {
			usage.input += reply.usage.input;
			usage.output += reply.usage.output;
			usage.totalTokens += reply.usage.totalTokens;
		}
		return reply;
	};
	if (segments.length <= 1) {
		const reply = await call(system, segments[0] ?? "");
		return reply.kind === "ok" ? { kind: "ok", text: reply.text.trim(), inputHash, usage } : reply;
	}
	const partials: string[] = [];
	for (const [i, segment] of segments.entries()) {
		const reply = await call(system, `Segment ${i + 1} of ${segments.length}:\n\n${segment}`);
		if (reply.kind !== "ok") return reply;
		partials.push(reply.text.trim());
	}
	// The merge input is short (a few summaries), but merge in rounds should it not fit.
	let round = partials;
	while (round.length > 1) {
		const groups = segmentInput(
			round.map((text, i) => ({ id: String(i), text })),
			maxChars,
		);
		const merged: string[] = [];
		for (const group of groups) {
			const reply = await call(MERGE_SEGMENTS_SYSTEM, group);
			if (reply.kind !== "ok") return reply;
			merged.push(reply.text.trim());
		}
		if (merged.length >= round.length) return { kind: "error", error: "segment summaries do not fit the model's context window" };
		round = merged;
	}
	return { kind: "ok", text: round[0] ?? "", inputHash, usage };
}
