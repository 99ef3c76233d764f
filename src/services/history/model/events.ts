/**
 * The vocabulary of pbot history: facts, named in the past tense, defined once.
 *
 * Reading a session file yields these events; the archive and the query view are projections
 * of them. Replaying an archive yields them again, so the same reducers rebuild everything.
 */
import type { Branch, LineRejection, QaNode, SessionFacts, SummaryPlan } from "./types.ts";

/** A session was read: its header (and latest name). Always the first event of a session. */
export interface SessionSeen {
	readonly type: "SessionSeen";
	readonly session: SessionFacts;
}

/** A Q&A node was extracted (or changed: an open Q&A that got its answer keeps its id). */
export interface QaObserved {
	readonly type: "QaObserved";
	readonly node: QaNode;
}

/** A summary over four nodes of one level was planned (not generated). */
export interface SummaryPlanned {
	readonly type: "SummaryPlanned";
	readonly plan: SummaryPlan;
}

/**
 * The complete, current set of branches of a session, after its Q&A and plans.
 * A snapshot rather than one event per branch: as a session grows, its old leaf stops being
 * a leaf, and an open Q&A that absorbs new input changes id; only the whole set says which
 * branches are gone.
 */
export interface BranchesObserved {
	readonly type: "BranchesObserved";
	readonly sessionId: string;
	readonly branches: readonly Branch[];
}

/** Usage a summary call reported (Pi-AI's shape, trimmed). */
export interface SummaryUsage {
	readonly input: number;
	readonly output: number;
	readonly totalTokens: number;
}

/** A summary text was generated. */
export interface SummaryReady {
	readonly type: "SummaryReady";
	readonly sessionId: string;
	readonly id: string;
	readonly text: string;
	/** `provider/modelId` */
	readonly model: string;
	readonly at: string;
	readonly promptVersion?: string;
	readonly inputHash?: string;
	readonly usage?: SummaryUsage;
}

/** A summary call failed; the summary stays pending. */
export interface SummaryFailed {
	readonly type: "SummaryFailed";
	readonly sessionId: string;
	readonly id: string;
	readonly error: string;
	readonly at: string;
}

/** A ready summary's inputs changed: it stays, flagged stale, and is queued to be made again. */
export interface SummaryMarkedStale {
	readonly type: "SummaryMarkedStale";
	readonly sessionId: string;
	readonly id: string;
}

/** A line of a session file could not be used. Bad input is an event, never a stream error. */
export interface LineRejected {
	readonly type: "LineRejected";
	readonly sessionId?: string;
	readonly rejection: LineRejection;
}

export type HistoryEvent = SessionSeen | QaObserved | SummaryPlanned | BranchesObserved | SummaryReady | SummaryFailed | SummaryMarkedStale | LineRejected;

/** The session an event is about (`undefined` for a rejected line of a file that named none). */
export function sessionOfEvent(event: HistoryEvent): string | undefined {
	switch (event.type) {
		case "SessionSeen":
			return event.session.sessionId;
		case "QaObserved":
			return event.node.sessionId;
		case "SummaryPlanned":
			return event.plan.sessionId;
		default:
			return event.sessionId;
	}
}
