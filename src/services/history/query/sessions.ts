import type { QueryView } from "../projections/queryView.ts";
import { sessionInfo, type SessionInfo } from "./nodeInfo.ts";
import { pageOf } from "./paging.ts";
import { type IdExists, intersects, parsePage, parseSessionFilter, parseTimeWindow, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from "./params.ts";
import type { SessionListItem, SessionListResult, SessionsParams } from "./types.ts";

/** What the session list needs of one session: its facts (from the archive, or the text projection's header). */
export interface SessionListFacts extends SessionInfo {
	readonly parentSessionId?: string;
}

/**
 * The workspace's sessions, newest first (by last activity, then id): what `search` answers
 * without a query and what `/pbot history` shows without a keyword. `from`/`to` keep the sessions
 * whose [first, last] time intersects the window; `sessionId` keeps only that session. A workspace
 * without sessions answers an empty list.
 */
export function listSessions(view: QueryView, params: SessionsParams = {}): SessionListResult {
	const facts = function* (): Iterable<[string, SessionListFacts]> {
		for (const [id, archive] of Object.entries(view.state.sessions)) {
			const parent = archive.session.parentSessionId;
			yield [id, { ...sessionInfo(archive), ...(parent !== undefined ? { parentSessionId: parent } : {}) }];
		}
	};
	return listSessionFacts(facts(), (id) => view.state.sessions[id] !== undefined, params);
}

/** The session list over sessions' facts, however they were obtained (the same answer either way). */
export function listSessionFacts(sessions: Iterable<[string, SessionListFacts]>, exists: IdExists, params: SessionsParams = {}): SessionListResult {
	const sessionId = parseSessionFilter(exists, params.sessionId);
	const window = parseTimeWindow(params.from, params.to);
	const page = parsePage(params.offset, params.limit, { defaultLimit: SEARCH_DEFAULT_LIMIT, maxLimit: SEARCH_MAX_LIMIT });

	const rows: { item: SessionListItem; lastMs: number }[] = [];
	for (const [id, info] of sessions) {
		if (sessionId !== undefined && id !== sessionId) continue;
		if (!intersects(window, info.firstMs, info.lastMs)) continue;
		const parent = info.parentSessionId;
		rows.push({
			lastMs: info.lastMs,
			item: {
				sessionId: id,
				rootId: id,
				title: info.title,
				named: info.named,
				firstAt: info.firstAt,
				lastAt: info.lastAt,
				qa: info.qa,
				incomplete: info.incomplete,
				branches: info.branches,
				summariesReady: info.summariesReady,
				summariesPending: info.summariesPending,
				...(parent !== undefined ? { parentSessionId: parent } : {}),
			},
		});
	}
	rows.sort((a, b) => b.lastMs - a.lastMs || compareIds(a.item.sessionId, b.item.sessionId));
	const { items, info } = pageOf(rows, page);
	return { kind: "sessions", sessions: items.map((r) => r.item), ...info };
}

/** Code-unit order: stable and the same on every machine (no locale). */
export function compareIds(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}
