/**
 * The query service: what the `pbot_history` tool, the `/pbot history` command and the CLI call.
 * Pure functions: over the in-memory `QueryView` of archives, or (the service's path) over the text
 * projection (`../text/`) and the archives of the hits shown.
 */
export { isQueryError, QueryError, type QueryErrorCode } from "./errors.ts";
export { foldQuery, foldText, originalRange, type FoldedText } from "./fold.ts";
export { ancestorCopies } from "./forkDuplicates.ts";
export {
	CHILDREN_PAGE_SIZE,
	lastPageOffset,
	parseInstant,
	parseNodeIdSyntax,
	unknownNode,
	parseTimeWindow,
	READ_DEFAULT_LIMIT,
	READ_MAX_LIMIT,
	SEARCH_DEFAULT_LIMIT,
	SEARCH_MAX_LIMIT,
	type TimeWindow,
} from "./params.ts";
export { qaBody, readNode, sessionBody, summaryBody } from "./read.ts";
export { groupHits, hitOf, pageInfo, parseSearch, searchHistory, type ParsedSearch } from "./search.ts";
export { defaultSearchIndex, scanSearchIndex, searchableText, type SearchDocument, type SearchIndex } from "./searchIndex.ts";
export { compareIds, listSessionFacts, listSessions, type SessionListFacts } from "./sessions.ts";
export { formatRange, formatTime, oneLine, sliceUtf16, snippetAround, type Snippet } from "./text.ts";
export type * from "./types.ts";
