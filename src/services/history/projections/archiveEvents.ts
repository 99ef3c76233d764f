import type { HistoryEvent } from "../model/events.ts";
import type { SessionArchive } from "./archive.ts";

/**
 * The events that rebuild an archive: replaying them into an empty state gives it back (tested), so
 * an archive can be checked against the reducer. Nothing on the ingest path needs it.
 */
export function archiveEvents(archive: SessionArchive): HistoryEvent[] {
	const sessionId = archive.session.sessionId;
	const events: HistoryEvent[] = [{ type: "SessionSeen", session: archive.session }];
	for (const rejection of archive.rejections.lines) events.push({ type: "LineRejected", sessionId, rejection });
	for (const node of Object.values(archive.nodes)) events.push({ type: "QaObserved", node });
	const summaries = Object.values(archive.summaries).sort((a, b) => a.level - b.level);
	for (const s of summaries) {
		const { status, text, model, madeAt, promptVersion, inputHash, usage, failure, stale, ...plan } = s;
		events.push({ type: "SummaryPlanned", plan });
		if (status === "ready" && text !== undefined) {
			events.push({
				type: "SummaryReady",
				sessionId,
				id: s.id,
				text,
				model: model ?? "unknown",
				at: madeAt ?? s.endedAt,
				...(promptVersion !== undefined ? { promptVersion } : {}),
				...(inputHash !== undefined ? { inputHash } : {}),
				...(usage !== undefined ? { usage } : {}),
			});
			if (stale) events.push({ type: "SummaryMarkedStale", sessionId, id: s.id });
		}
		if (failure) {
			for (let attempt = 0; attempt < failure.attempts; attempt++)
				events.push({ type: "SummaryFailed", sessionId, id: s.id, error: failure.error, at: failure.at });
		}
	}
	events.push({ type: "BranchesObserved", sessionId, branches: archive.branches });
	return events;
}
