import type { SessionArchive, SummaryRecord } from "./archive.ts";
import { MAX_STORED_REJECTIONS } from "./archive.ts";
import { deepEqual } from "../model/deepEqual.ts";
import type { LineRejection, QaNode } from "../model/types.ts";
import { pruneUnreachable } from "./reachable.ts";

/**
 * Merges what a writer is about to store (`mine`) with the archive of the same session that is on
 * disk now (`stored`), which another process may have written since this one read it.
 *
 * Two Pi processes on one workspace both ingest and summarize; neither may lose what the other
 * stored (docs/architecture.md, "Durability"). The rules, per record:
 * - Q&A nodes: the union. For an id both have, a closed node beats an open one (an answer that
 *   arrived in one process is not taken back by the other's older view); otherwise `mine`.
 * - Summaries: the union, whole records. Ready beats pending; of two ready ones the newer `madeAt`
 *   wins, and of two made at the same time a stale one (one writer saw a child change; the text is
 *   due again); of two pending ones `mine`, carrying the failure with more attempts. Other ties go
 *   to `mine`.
 * - Branches and session facts: `mine` (the writer's own latest reading of the native file).
 * - Rejected lines: the union by line number (at most `MAX_STORED_REJECTIONS` kept), the larger count.
 * - Then, as the archive reducer does, open Q&A and pending summaries that no branch of the result
 *   reaches are dropped: they were superseded (an open Q&A that absorbed a retry has a new id), and
 *   keeping them would bring stale leaves back on every write. Closed Q&A and ready summaries are
 *   never dropped.
 *
 * Pure; returns `mine` itself when `stored` adds nothing, so a single writer's archive is written as
 * it is. Merging an archive with an earlier state of the same writer gives the later state.
 */
export function mergeArchives(stored: SessionArchive, mine: SessionArchive): SessionArchive {
	if (stored === mine) return mine;
	const nodes: Record<string, QaNode> = {};
	for (const [id, node] of Object.entries(mine.nodes)) {
		const other = stored.nodes[id];
		nodes[id] = other?.completed && !node.completed ? other : node;
	}
	for (const [id, node] of Object.entries(stored.nodes)) if (!(id in nodes)) nodes[id] = node;

	const summaries: Record<string, SummaryRecord> = {};
	for (const [id, summary] of Object.entries(mine.summaries)) {
		const other = stored.summaries[id];
		summaries[id] = other ? pickSummary(other, summary) : summary;
	}
	for (const [id, summary] of Object.entries(stored.summaries)) if (!(id in summaries)) summaries[id] = summary;

	pruneUnreachable(nodes, summaries, mine.branches);

	const merged: SessionArchive = {
		format: mine.format,
		version: mine.version,
		session: mine.session,
		nodes,
		summaries,
		branches: mine.branches,
		rejections: mergeRejections(stored.rejections, mine.rejections),
	};
	return deepEqual(merged, mine) ? mine : merged;
}

/** The summary record to keep when both sides have one (see `mergeArchives`). */
export function pickSummary(stored: SummaryRecord, mine: SummaryRecord): SummaryRecord {
	const storedReady = stored.status === "ready";
	const mineReady = mine.status === "ready";
	if (storedReady !== mineReady) return storedReady ? stored : mine;
	if (mineReady) {
		const a = stored.madeAt ?? "";
		const b = mine.madeAt ?? "";
		if (a !== b) return a > b ? stored : mine;
		return stored.stale === true && mine.stale !== true ? stored : mine;
	}
	const storedAttempts = stored.failure?.attempts ?? 0;
	if (storedAttempts > (mine.failure?.attempts ?? 0) && stored.failure) return { ...mine, failure: stored.failure };
	return mine;
}

function mergeRejections(stored: SessionArchive["rejections"], mine: SessionArchive["rejections"]): SessionArchive["rejections"] {
	const lines: LineRejection[] = [...mine.lines];
	const seen = new Set(lines.map((l) => l.line));
	for (const l of stored.lines) {
		if (lines.length >= MAX_STORED_REJECTIONS) break;
		if (!seen.has(l.line)) {
			seen.add(l.line);
			lines.push(l);
		}
	}
	const count = Math.max(stored.count, mine.count, lines.length);
	return lines.length === mine.lines.length && count === mine.count ? mine : { count, lines };
}
