import { map, type OperatorFunction } from "rxjs";
import type { HistoryEvent } from "../model/events.ts";
import type { PlannedSession } from "./reduceLevels.ts";
import { sessionIdFromFileName } from "../model/sessionFileName.ts";
import type { SessionFacts } from "../model/types.ts";

/**
 * Turns a planned session into history events, in the order projections expect: the session
 * first, then rejected lines, Q&A, plans, and last the branch set (which lets a projection drop
 * what no branch reaches any more).
 */
export function toHistoryEvents(): OperatorFunction<PlannedSession, HistoryEvent[]> {
	return map(sessionEvents);
}

export function sessionEvents(planned: PlannedSession): HistoryEvent[] {
	const { sessionId, tree } = planned;
	// A file Pi has named but not written yet (or only a torn first line): nothing to say.
	if (!tree.header && tree.messages.length === 0 && tree.rejectedCount === 0) return [];
	// Without a header or a fallback there is no session to attach anything to: only the rejections.
	if (sessionId === "") return tree.rejections.map((rejection) => ({ type: "LineRejected", rejection }));
	const events: HistoryEvent[] = [{ type: "SessionSeen", session: sessionFacts(planned) }];
	for (const rejection of tree.rejections) events.push({ type: "LineRejected", sessionId, rejection });
	for (const node of planned.nodes.values()) events.push({ type: "QaObserved", node });
	for (const plan of planned.plans) events.push({ type: "SummaryPlanned", plan });
	events.push({ type: "BranchesObserved", sessionId, branches: planned.branches });
	return events;
}

function sessionFacts(planned: PlannedSession): SessionFacts {
	const { header, name, messages } = planned.tree;
	const parentSessionId = header?.parentSession ? sessionIdFromFileName(header.parentSession) : undefined;
	return {
		sessionId: planned.sessionId,
		version: header?.version ?? 1,
		startedAt: validTime(header?.timestamp) ?? messages[0]?.at ?? new Date(0).toISOString(),
		...(name !== undefined ? { name } : {}),
		...(parentSessionId ? { parentSessionId } : {}),
	};
}

function validTime(value: string | undefined): string | undefined {
	if (value === undefined) return undefined;
	const t = Date.parse(value);
	return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}
