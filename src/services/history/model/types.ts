/**
 * Domain types of pbot history: what a Pi session becomes once read.
 *
 * These are plain, serialisable data. Everything in here may end up in an archive, so nothing in
 * here may ever hold a file or directory path.
 */

/** ISO-8601 time string (UTC), as Pi writes it. */
export type IsoTime = string;

/** One part of a Q&A in the order it happened: a user input or an assistant reply text. */
export type QaPart = QaInput | QaReply;

/** Something the person typed: the first question, steering, a retry after an abort. */
export interface QaInput {
	readonly kind: "input";
	/** Native entry id of the `message` entry (role `user`). */
	readonly entryId: string;
	readonly text: string;
	readonly at: IsoTime;
	/** Images attached to the input. Their bytes are never archived, only that they were there. */
	readonly images?: number;
}

/**
 * An assistant reply without tool calls: the final answer, or a reply that was cut short
 * (aborted, errored). Text an assistant wrote beside tool calls is not a reply and is not kept.
 */
export interface QaReply {
	readonly kind: "reply";
	readonly entryId: string;
	readonly text: string;
	readonly at: IsoTime;
	/** Pi's stop reason: `stop` and `length` end a Q&A; `aborted` and `error` do not. */
	readonly stopReason: string;
	readonly error?: string;
}

/** A question/answer node: user input(s) up to the final assistant reply that has no tool calls. */
export interface QaNode {
	readonly kind: "qa";
	readonly id: string;
	readonly sessionId: string;
	readonly parts: readonly QaPart[];
	/** Every native entry id the Q&A spans, in path order (tool calls and results included). */
	readonly entryIds: readonly string[];
	readonly startedAt: IsoTime;
	readonly endedAt: IsoTime;
	/** False when the Q&A was interrupted, errored or never answered. */
	readonly completed: boolean;
	/** Labels a person put on any entry of this Q&A with Pi's `/label`. */
	readonly labels?: readonly string[];
}

/** The ordered Q&A ids along one root→leaf path of the native entry tree. */
export interface Branch {
	/** Native entry id of the last message on the path. */
	readonly leafId: string;
	readonly nodeIds: readonly string[];
}

/** A planned summary over four consecutive nodes of one level on a branch. */
export interface SummaryPlan {
	readonly id: string;
	readonly sessionId: string;
	/** 1 = over four Q&A, 2 = over four level-1 summaries, … */
	readonly level: number;
	readonly childIds: readonly string[];
	/** First and last native entry id of the covered range. */
	readonly range: { readonly firstEntryId: string; readonly lastEntryId: string };
	readonly startedAt: IsoTime;
	readonly endedAt: IsoTime;
}

/** What Pi's header says about a session, minus anything that is a path. */
export interface SessionFacts {
	readonly sessionId: string;
	/** Pi's session file version (1, 2 or 3). */
	readonly version: number;
	readonly startedAt: IsoTime;
	/** Latest `/name`, if any. */
	readonly name?: string;
	/** Session id of the file this one was forked or cloned from (from the header's path, id only). */
	readonly parentSessionId?: string;
}

/** Why a line of a session file was not used. */
export interface LineRejection {
	/** 1-based line number in the native file. */
	readonly line: number;
	readonly reason: string;
	/**
	 * The line's length in UTF-8 bytes, where it was read (not for a line rejected after parsing).
	 * Never any of its text: a rejected line can hold anything (a path, a pasted secret).
	 */
	readonly bytes?: number;
}
