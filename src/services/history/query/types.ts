/**
 * What the query service answers. These objects are the tool's `details` and the CLI's `--json`
 * output as they are: plain JSON (no `undefined` values, no class instances, no paths).
 */

/** What kind of node an id names. */
export type NodeKind = "session" | "summary" | "qa";

/** Paging facts shared by every list answer. */
export interface PageInfo {
	/** How many items the whole (filtered) list has. */
	readonly total: number;
	readonly offset: number;
	/** The limit applied (after clamping). */
	readonly limit: number;
	/** Offset of the next page, or `null` when this page reaches the end (always `null` with limit 0: a count). */
	readonly nextOffset: number | null;
	/** True when the asked limit was above the maximum and was lowered to it. */
	readonly clamped: boolean;
}

/** One session of the workspace, as the session list shows it. */
export interface SessionListItem {
	readonly sessionId: string;
	/** The id to `read` for the session's directory listing (the session id itself). */
	readonly rootId: string;
	/** The session's `/name`, else its first question, shortened to one line. */
	readonly title: string;
	/** Whether `title` is the session's `/name` (false: its first question). */
	readonly named: boolean;
	readonly firstAt: string;
	readonly lastAt: string;
	readonly qa: number;
	readonly incomplete: number;
	readonly branches: number;
	readonly summariesReady: number;
	readonly summariesPending: number;
	/** The session this one was forked or cloned from, when known. */
	readonly parentSessionId?: string;
}

/** `sessions`, or `search` without a query. */
export interface SessionListResult extends PageInfo {
	readonly kind: "sessions";
	readonly sessions: readonly SessionListItem[];
}

/** One search hit: a Q&A original (level 0) or a summary (level ≥ 1). */
export interface SearchHit {
	readonly id: string;
	readonly kind: "qa" | "summary";
	readonly level: number;
	readonly sessionId: string;
	readonly sessionTitle: string;
	readonly startedAt: string;
	readonly endedAt: string;
	/** The start of the node's own text, one line (`hitPreview`): what a list of hits leads with. */
	readonly preview: string;
	/** About 80 characters each side of the first match, original characters, `…` where cut. */
	readonly snippet: string;
	/** Where the match is in `snippet` (UTF-16 offsets). */
	readonly match: { readonly start: number; readonly length: number };
	/** Always true for a hit: a summary without text has nothing to match. */
	readonly ready: boolean;
	/** False when the Q&A (or, for a summary, any Q&A it covers) is unfinished. */
	readonly completed: boolean;
	/**
	 * Summaries only: whether the matched text also occurs in one of the Q&A originals the summary
	 * covers (at any depth). False means only the summary says it — a clue, not a quote.
	 */
	readonly verified?: boolean;
	/** Summaries only, when the record says so: its text was made from inputs that have changed. */
	readonly stale?: boolean;
}

/** The hits of one level on the current page. */
export interface HitGroup {
	/** 0 = Q&A originals, 1 = level-1 summaries, … */
	readonly level: number;
	readonly hits: readonly SearchHit[];
}

/** `search` with a query. */
export interface SearchResult extends PageInfo {
	readonly kind: "hits";
	/** The query as matched (surrounding whitespace trimmed). */
	readonly query: string;
	/** Non-empty groups of this page, in level order. Paging runs over the groups concatenated. */
	readonly groups: readonly HitGroup[];
}

/** A parent or child as `read` lists it. */
export interface NodeRef {
	readonly id: string;
	readonly kind: NodeKind;
	/** 0 for a Q&A, the summary level for a summary, `null` for a session root. */
	readonly level: number | null;
	readonly startedAt: string;
	readonly endedAt: string;
	/** One line of about 100 characters: the question, the summary text, or the session title. */
	readonly preview: string;
}

/** `read`: one node's body slice and its neighbours. */
export interface ReadResult {
	readonly id: string;
	readonly kind: NodeKind;
	readonly level: number | null;
	readonly sessionId: string;
	readonly sessionTitle: string;
	readonly startedAt: string;
	readonly endedAt: string;
	/** False for a summary that is planned but not generated yet (its body is empty). */
	readonly ready: boolean;
	/** False when the node is or covers an unfinished Q&A. */
	readonly completed: boolean;
	readonly stale?: boolean;
	/** The slice of the body, `[offset, offset + body.length)` in UTF-16 code units. */
	readonly body: string;
	/** Where the slice starts (the asked offset, or one less if that fell inside a surrogate pair). */
	readonly offset: number;
	readonly limit: number;
	readonly clamped: boolean;
	readonly totalLength: number;
	/** Offset of the rest of the body, or `null` when the slice reaches its end. */
	readonly nextOffset: number | null;
	/** Every parent: the summaries that cover the node and, for a branch's top node, the session. */
	readonly parents: readonly NodeRef[];
	/** One page (20) of the children, from `childrenOffset`. */
	readonly children: readonly NodeRef[];
	readonly childrenOffset: number;
	readonly totalChildren: number;
	readonly nextChildrenOffset: number | null;
	/**
	 * Where the node came from: the native session id and message entry ids (every entry of a Q&A;
	 * the first and last of a summary's range; none for a session root). Never a path.
	 */
	readonly source: { readonly sessionId: string; readonly entryIds: readonly string[] };
}

/** Parameters of `sessions` (and of `search` without a query). */
export interface SessionsParams {
	readonly sessionId?: string;
	/** ISO-8601 date (a whole UTC day) or date-time with `Z`/offset. */
	readonly from?: string;
	readonly to?: string;
	/** Non-negative integers; the CLI may pass them as decimal strings. */
	readonly offset?: number | string;
	readonly limit?: number | string;
}

/** Parameters of `search`. Without a (non-blank) query it lists sessions. */
export interface SearchParams extends SessionsParams {
	readonly query?: string;
}

/** Parameters of `read`. */
export interface ReadParams {
	readonly id: string;
	readonly offset?: number | string;
	readonly limit?: number | string;
	readonly childrenOffset?: number | string;
}
