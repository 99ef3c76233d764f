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
	type PageRequest,
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

/** Above this many hits, only the requested page is put in order (the rest is only counted). */
const SORT_ALL_BELOW = 2_000;

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
	const ranked = index.ranked?.(view, needle, { ...(sessionId !== undefined ? { sessionId } : {}), window }, page.offset + page.limit);
	let items: Found[];
	let info: PageInfo;
	if (ranked) {
		// The index ranked the hits itself; offsets in the text come later, for the page only.
		items = ranked.top.slice(page.offset, page.offset + page.limit).map((doc) => ({
			doc,
			archive: view.state.sessions[doc.sessionId] as SessionArchive,
			level: isQa(doc) ? 0 : doc.level,
			at: -1,
			endMs: timeMs(doc.endedAt),
		}));
		info = pageInfo(ranked.total, page);
	} else ({ items, info } = pageOf(orderForPage(findMatches(view, needle, sessionId, window, index), page.offset + page.limit), page));
	const groups: HitGroup[] = [];
	for (const f of items) {
		const hit = toHit(view, f, needle, index);
		const group = groups[groups.length - 1];
		if (group && group.level === f.level) (group.hits as SearchHit[]).push(hit);
		else groups.push({ level: f.level, hits: [hit] });
	}
	return { kind: "hits", query, groups, ...info };
}

/** Paging facts for a list known only by its length (as `pageOf` gives them). */
function pageInfo(total: number, page: PageRequest): PageInfo {
	const end = Math.min(total, page.offset + page.limit);
	const next = page.offset < total ? (page.limit === 0 ? page.offset : end < total ? end : null) : null;
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
 * The hits in rank order (level, newest first, id) as far as a page ending at `needed` requires:
 * the first `needed` in order, the rest after them unordered (they are only counted). A partial
 * selection instead of a full sort keeps a query that matches most of a million nodes cheap.
 */
function orderForPage(found: Found[], needed: number): Found[] {
	if (found.length < SORT_ALL_BELOW || needed * 4 > found.length) return found.sort(byRank);
	// Keep the best `needed` in a sorted array; most hits fall below its last element and are skipped.
	const best: Found[] = [];
	const rest: Found[] = [];
	for (const f of found) {
		if (best.length < needed) {
			insertSorted(best, f);
			continue;
		}
		if (needed === 0 || byRank(f, best[best.length - 1] as Found) >= 0) {
			rest.push(f);
			continue;
		}
		rest.push(best.pop() as Found);
		insertSorted(best, f);
	}
	return [...best, ...rest];
}

function insertSorted(list: Found[], f: Found): void {
	let lo = 0;
	let hi = list.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (byRank(list[mid] as Found, f) <= 0) lo = mid + 1;
		else hi = mid;
	}
	list.splice(lo, 0, f);
}

function toHit(view: QueryView, f: Found, needle: string, index: SearchIndex): SearchHit {
	const at = f.at >= 0 ? f.at : index.indexOf(f.doc, needle);
	const range = index.originalRange(f.doc, at, needle.length);
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
