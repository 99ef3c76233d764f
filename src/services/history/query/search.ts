import type { SessionArchive, SummaryRecord } from "../projections/archive.ts";
import type { QueryView } from "../projections/queryView.ts";
import type { QaNode } from "../model/types.ts";
import { foldQuery } from "./fold.ts";
import { isForkDuplicate } from "./forkDuplicates.ts";
import { coveredQa, sessionInfo, staleFlag } from "./nodeInfo.ts";
import { pageOf, topForPage } from "./paging.ts";
import {
	type IdExists,
	intersects,
	parsePage,
	type PageRequest,
	parseQueryText,
	parseSessionFilter,
	parseTimeWindow,
	SEARCH_DEFAULT_LIMIT,
	SEARCH_MAX_LIMIT,
	type TimeWindow,
} from "./params.ts";
import { defaultSearchIndex, hitPreview, isQa, type SearchDocument, type SearchIndex } from "./searchIndex.ts";
import { compareIds, listSessions } from "./sessions.ts";
import { snippetAround, timeMs } from "./text.ts";
import type { HitGroup, PageInfo, SearchHit, SearchParams, SearchResult, SessionListResult } from "./types.ts";

/** A match found before paging: only what ordering and de-duplication need. */
interface Found {
	readonly doc: SearchDocument;
	readonly archive: SessionArchive;
	readonly level: number;
	/** Offset of the first match in the folded text; -1 when not known yet (found by an index). */
	readonly at: number;
	readonly endMs: number;
}

/** A search's parameters, validated in the order every search validates them. */
export interface ParsedSearch {
	/** The query as matched (trimmed); `""` means: list sessions instead. */
	readonly query: string;
	readonly needle: string;
	readonly sessionId: string | undefined;
	readonly window: TimeWindow;
	readonly page: PageRequest;
}

/**
 * Validates a search's parameters (the query first; without one, the caller lists sessions and
 * validates the rest as the session list does). `exists` says whether a session id is known.
 */
export function parseSearch(params: SearchParams, exists: IdExists | QueryView): ParsedSearch {
	const query = parseQueryText(params.query);
	if (query === "") return { query, needle: "", sessionId: undefined, window: {}, page: { offset: 0, limit: 0, clamped: false } };
	const sessionId = parseSessionFilter(exists, params.sessionId);
	const window = parseTimeWindow(params.from, params.to);
	const page = parsePage(params.offset, params.limit, { defaultLimit: SEARCH_DEFAULT_LIMIT, maxLimit: SEARCH_MAX_LIMIT });
	return { query, needle: foldQuery(query), sessionId, window, page };
}

/**
 * The tool's `search`. With a query: case-insensitive contiguous-substring matches (see `fold.ts`)
 * in every Q&A original (inputs and replies, not tool output) and every ready summary, grouped by
 * level (0 = originals, 1, 2, … = summaries), newest first within a level (end time descending,
 * then id). Paging runs over the groups concatenated in level order, so pages put together give
 * every hit exactly once. A fork's copies of its parent's Q&A are shown once (`forkDuplicates.ts`).
 * Without a query (absent, empty or blank): the session list, with the same filters and paging.
 *
 * This is the plain scan over archives in memory: the reference the service's scan of the text
 * projection (`text/`) is checked against, and what a caller holding archives can use directly.
 * It never reads a file and never calls a model.
 */
export function searchHistory(view: QueryView, params: SearchParams = {}, index: SearchIndex = defaultSearchIndex): SearchResult | SessionListResult {
	const parsed = parseSearch(params, view);
	if (parsed.query === "") return listSessions(view, params);
	const { needle, sessionId, window, page } = parsed;
	const { items, info } = pageOf(topForPage(findMatches(view, needle, sessionId, window, index), page.offset + page.limit, byRank), page);
	return {
		kind: "hits",
		query: parsed.query,
		groups: groupHits(items.map((f) => ({ level: f.level, hit: hitOf(view, f.doc, f.archive, needle, index, f.at) }))),
		...info,
	};
}

/** Hits of a page in rank order, grouped by level (paging runs over the groups concatenated). */
export function groupHits(hits: readonly { readonly level: number; readonly hit: SearchHit }[]): HitGroup[] {
	const groups: HitGroup[] = [];
	for (const { level, hit } of hits) {
		const group = groups[groups.length - 1];
		if (group && group.level === level) (group.hits as SearchHit[]).push(hit);
		else groups.push({ level, hits: [hit] });
	}
	return groups;
}

/** Paging facts for a list known only by its length (as `pageOf` gives them). */
export function pageInfo(total: number, page: PageRequest): PageInfo {
	const end = Math.min(total, page.offset + page.limit);
	const next = page.limit > 0 && end < total ? end : null; // (as `pageOf`: limit 0 is a count)
	return { total, offset: page.offset, limit: page.limit, nextOffset: next, clamped: page.clamped };
}

/** The scan: every document is looked at. */
function findMatches(view: QueryView, needle: string, sessionId: string | undefined, window: TimeWindow, index: SearchIndex): Found[] {
	const filtered = window.fromMs !== undefined || window.toMs !== undefined;
	const found: Found[] = [];
	for (const [id, archive] of Object.entries(view.state.sessions)) {
		if (sessionId !== undefined && id !== sessionId) continue;
		const consider = (doc: QaNode | SummaryRecord, level: number) => {
			const endMs = timeMs(doc.endedAt);
			if (filtered && !intersects(window, timeMs(doc.startedAt), endMs)) return;
			const at = index.indexOf(doc, needle);
			if (at >= 0) found.push({ doc, archive, level, at, endMs });
		};
		for (const qa of Object.values(archive.nodes)) consider(qa, 0);
		// A pending summary has no text: nothing in it can match.
		for (const summary of Object.values(archive.summaries)) if (summary.status === "ready") consider(summary, summary.level);
	}
	const hitIds = new Set(found.filter((f) => f.level === 0).map((f) => f.doc.id));
	return found.filter((f) => !(isQa(f.doc) && isForkDuplicate(view, f.doc, hitIds)));
}

const byRank = (a: Found, b: Found) => a.level - b.level || b.endMs - a.endMs || compareIds(a.doc.id, b.doc.id);

/**
 * A hit as the answer shows it: the snippet cut from the document's original text around its
 * first match (`at`, the folded offset, when known), the session's title, and for a summary
 * whether the Q&A it covers say it too (`verified`). `view` needs to hold the document's session.
 */
export function hitOf(
	view: QueryView,
	doc: SearchDocument,
	archive: SessionArchive,
	needle: string,
	index: SearchIndex = defaultSearchIndex,
	at = -1,
): SearchHit {
	const first = at >= 0 ? at : index.indexOf(doc, needle);
	const range = index.originalRange(doc, first, needle.length);
	const snippet = snippetAround(index.textOf(doc), range.start, range.end);
	const level = isQa(doc) ? 0 : doc.level;
	const common = {
		id: doc.id,
		kind: isQa(doc) ? ("qa" as const) : ("summary" as const),
		level,
		sessionId: doc.sessionId,
		sessionTitle: sessionInfo(archive).title,
		startedAt: doc.startedAt,
		endedAt: doc.endedAt,
		preview: hitPreview(index.textOf(doc)),
		snippet: snippet.text,
		match: snippet.match,
		ready: true,
	};
	if (isQa(doc)) return { ...common, completed: doc.completed };
	const covered = coveredQa(view, doc);
	return {
		...common,
		completed: covered.every((qa) => qa.completed),
		verified: covered.some((qa) => index.indexOf(qa, needle) >= 0),
		...staleFlag(doc),
	};
}
