import type { SessionArchive, SummaryRecord } from "../archive.ts";
import type { QueryView } from "../queryView.ts";
import type { QaNode } from "../types.ts";
import { foldQuery } from "./fold.ts";
import { isForkDuplicate } from "./forkDuplicates.ts";
import { coveredQa, sessionInfo, staleFlag } from "./nodeInfo.ts";
import { pageOf } from "./paging.ts";
import {
	intersects,
	parsePage,
	parseQueryText,
	parseSessionFilter,
	parseTimeWindow,
	SEARCH_DEFAULT_LIMIT,
	SEARCH_MAX_LIMIT,
	type TimeWindow,
} from "./params.ts";
import { defaultSearchIndex, isQa, type SearchDocument, type SearchIndex } from "./searchIndex.ts";
import { compareIds, listSessions } from "./sessions.ts";
import { snippetAround, timeMs } from "./text.ts";
import type { HitGroup, SearchHit, SearchParams, SearchResult, SessionListResult } from "./types.ts";

/** A match found before paging: only what ordering and de-duplication need. */
interface Found {
	readonly doc: SearchDocument;
	readonly archive: SessionArchive;
	readonly level: number;
	/** Offset of the first match in the folded text. */
	readonly at: number;
	readonly endMs: number;
}

/**
 * The tool's `search`. With a query: case-insensitive contiguous-substring matches (see `fold.ts`)
 * in every Q&A original (inputs and replies, not tool output) and every ready summary, grouped by
 * level (0 = originals, 1, 2, … = summaries), newest first within a level (end time descending,
 * then id). Paging runs over the groups concatenated in level order, so pages put together give
 * every hit exactly once. A fork's copies of its parent's Q&A are shown once (`forkDuplicates.ts`).
 * Without a query (absent, empty or blank): the session list, with the same filters and paging.
 *
 * Runs on the in-memory view only; it never reads a file and never calls a model.
 */
export function searchHistory(view: QueryView, params: SearchParams = {}, index: SearchIndex = defaultSearchIndex): SearchResult | SessionListResult {
	const query = parseQueryText(params.query);
	if (query === "") return listSessions(view, params);
	const sessionId = parseSessionFilter(view, params.sessionId);
	const window = parseTimeWindow(params.from, params.to);
	const page = parsePage(params.offset, params.limit, { defaultLimit: SEARCH_DEFAULT_LIMIT, maxLimit: SEARCH_MAX_LIMIT });

	const needle = foldQuery(query);
	const found = findMatches(view, needle, sessionId, window, index);
	found.sort((a, b) => a.level - b.level || b.endMs - a.endMs || compareIds(a.doc.id, b.doc.id));

	const { items, info } = pageOf(found, page);
	const groups: HitGroup[] = [];
	for (const f of items) {
		const hit = toHit(view, f, needle, index);
		const group = groups[groups.length - 1];
		if (group && group.level === f.level) (group.hits as SearchHit[]).push(hit);
		else groups.push({ level: f.level, hits: [hit] });
	}
	return { kind: "hits", query, groups, ...info };
}

function findMatches(view: QueryView, needle: string, sessionId: string | undefined, window: TimeWindow, index: SearchIndex): Found[] {
	const candidates = index.candidates?.(needle);
	const filtered = window.fromMs !== undefined || window.toMs !== undefined;
	const found: Found[] = [];
	const consider = (doc: QaNode | SummaryRecord, archive: SessionArchive, level: number) => {
		if (candidates && !candidates.has(doc)) return;
		const endMs = timeMs(doc.endedAt);
		if (filtered && !intersects(window, timeMs(doc.startedAt), endMs)) return;
		const at = index.indexOf(doc, needle);
		if (at >= 0) found.push({ doc, archive, level, at, endMs });
	};
	for (const [id, archive] of Object.entries(view.state.sessions)) {
		if (sessionId !== undefined && id !== sessionId) continue;
		for (const qa of Object.values(archive.nodes)) consider(qa, archive, 0);
		// A pending summary has no text: nothing in it can match.
		for (const summary of Object.values(archive.summaries)) if (summary.status === "ready") consider(summary, archive, summary.level);
	}
	const hitIds = new Set(found.filter((f) => f.level === 0).map((f) => f.doc.id));
	return found.filter((f) => !(isQa(f.doc) && isForkDuplicate(view, f.doc, hitIds)));
}

function toHit(view: QueryView, f: Found, needle: string, index: SearchIndex): SearchHit {
	const range = index.originalRange(f.doc, f.at, needle.length);
	const snippet = snippetAround(index.textOf(f.doc), range.start, range.end);
	const common = {
		id: f.doc.id,
		kind: isQa(f.doc) ? ("qa" as const) : ("summary" as const),
		level: f.level,
		sessionId: f.doc.sessionId,
		sessionTitle: sessionInfo(f.archive).title,
		startedAt: f.doc.startedAt,
		endedAt: f.doc.endedAt,
		snippet: snippet.text,
		match: snippet.match,
		ready: true,
	};
	if (isQa(f.doc)) return { ...common, completed: f.doc.completed };
	const covered = coveredQa(view, f.doc);
	return {
		...common,
		completed: covered.every((qa) => qa.completed),
		verified: covered.some((qa) => index.indexOf(qa, needle) >= 0),
		...staleFlag(f.doc),
	};
}
