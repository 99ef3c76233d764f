import type { ArchiveState, SummaryRecord } from "../projections/archive.ts";

/** A summary to make (pending, or stale), with the archive it belongs to. */
export interface WorkItem {
	readonly sessionId: string;
	readonly summary: SummaryRecord;
}

/**
 * The summaries to make next, in order: lowest level first, then oldest (by start time, then id).
 * A summary over summaries waits until its four children are ready. Stale summaries are due again.
 */
export function pendingWork(state: ArchiveState, skip: ReadonlySet<string> = new Set()): WorkItem[] {
	const items: WorkItem[] = [];
	for (const [sessionId, archive] of Object.entries(state.sessions)) {
		for (const summary of Object.values(archive.summaries)) {
			if (skip.has(summary.id)) continue;
			const due = summary.status === "pending" || summary.stale === true;
			if (!due) continue;
			if (summary.level > 1 && !summary.childIds.every((c) => archive.summaries[c]?.status === "ready")) continue;
			items.push({ sessionId, summary });
		}
	}
	return items.sort(
		(a, b) =>
			a.summary.level - b.summary.level ||
			(a.summary.startedAt < b.summary.startedAt ? -1 : a.summary.startedAt > b.summary.startedAt ? 1 : 0) ||
			(a.summary.id < b.summary.id ? -1 : a.summary.id > b.summary.id ? 1 : 0),
	);
}

/** How many summaries are due in all (including those waiting for their children): the progress total. */
export function dueCount(state: ArchiveState): number {
	let n = 0;
	for (const archive of Object.values(state.sessions)) for (const s of Object.values(archive.summaries)) if (s.status === "pending" || s.stale === true) n++;
	return n;
}
