import { beforeAll, describe, expect, it } from "vitest";
import { initialArchiveState } from "../../src/services/history/projections/archive.ts";
import { buildQueryView, type QueryView } from "../../src/services/history/projections/queryView.ts";
import { QueryError } from "../../src/services/history/query/errors.ts";
import { listSessions } from "../../src/services/history/query/sessions.ts";
import { searchHistory } from "../../src/services/history/query/search.ts";
import type { SessionListItem } from "../../src/services/history/query/types.ts";
import { fixtureSessionId, fixtureView, NATIVE_KEYS, qaNodes } from "./helpers.ts";

describe("session list", () => {
	let view: QueryView;
	beforeAll(async () => {
		view = await fixtureView(NATIVE_KEYS);
	});

	it("lists every session newest first with its counts, the same as search without a query", () => {
		const result = listSessions(view, { limit: 50 });
		expect(result.kind).toBe("sessions");
		expect(result.total).toBe(NATIVE_KEYS.length);
		const last = result.sessions.map((s) => Date.parse(s.lastAt));
		expect(last).toEqual([...last].sort((a, b) => b - a));
		expect(searchHistory(view, { query: "  ", limit: 50 })).toEqual(result);

		const many = result.sessions.find((s) => s.sessionId === fixtureSessionId("many-qa-72")) as SessionListItem;
		expect(many).toMatchObject({ rootId: many.sessionId, qa: 72, incomplete: 0, branches: 1, summariesReady: 0, summariesPending: 23, named: false });
		expect(many.title).toBe("Question topic-001: what is the status of module-001?");
		const shared = result.sessions.find((s) => s.sessionId === fixtureSessionId("shared-prefix-branches"));
		expect(shared?.branches).toBe(3);
		const abort = result.sessions.find((s) => s.sessionId === fixtureSessionId("abort-at-leaf"));
		expect(abort?.incomplete).toBe(1);
	});

	it("titles a session by its /name, else by its first question shortened to one line", () => {
		const result = listSessions(view, { limit: 50 });
		const named = result.sessions.find((s) => s.sessionId === fixtureSessionId("tools-thinking"));
		expect(named).toMatchObject({ title: "Greeting script check", named: true });
		for (const s of result.sessions) {
			expect(s.title).not.toMatch(/\n/);
			expect(s.title.length).toBeLessThanOrEqual(80);
		}
		const long = result.sessions.find((s) => s.sessionId === fixtureSessionId("long-answer"));
		const first = qaNodes(view, fixtureSessionId("long-answer")).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt))[0];
		expect(first?.parts[0]?.text.replace(/\s+/g, " ").startsWith(long?.title.replace(/…$/, "") ?? "?")).toBe(true);
	});

	it("names the fork's parent", () => {
		const fork = listSessions(view, { sessionId: fixtureSessionId("fork") }).sessions;
		expect(fork).toHaveLength(1);
		expect(fork[0]?.parentSessionId).toBe(fixtureSessionId("fork-source"));
	});

	it("pages: all pages together are the whole list, each session once", () => {
		const whole = listSessions(view, { limit: 50 }).sessions.map((s) => s.sessionId);
		for (const limit of [1, 4, 5]) {
			const seen: string[] = [];
			let offset: number | null = 0;
			while (offset !== null) {
				const page = listSessions(view, { offset, limit });
				seen.push(...page.sessions.map((s) => s.sessionId));
				offset = page.nextOffset;
			}
			expect(seen).toEqual(whole);
		}
		expect(listSessions(view, { offset: whole.length })).toMatchObject({ sessions: [], nextOffset: null, total: whole.length });
		expect(listSessions(view, { limit: 51 })).toMatchObject({ limit: 50, clamped: true });
	});

	it("keeps the sessions whose [first, last] time intersects [from, to]", () => {
		const many = listSessions(view, { sessionId: fixtureSessionId("many-qa-72") }).sessions[0] as SessionListItem;
		const first = Date.parse(many.firstAt);
		const last = Date.parse(many.lastAt);
		const inside = new Date((first + last) / 2).toISOString();
		const ids = (from?: string, to?: string) =>
			listSessions(view, { limit: 50, ...(from ? { from } : {}), ...(to ? { to } : {}) }).sessions.map((s) => s.sessionId);
		// Starts before `from` and ends after it: kept.
		expect(ids(inside)).toContain(many.sessionId);
		expect(ids(undefined, inside)).toContain(many.sessionId);
		expect(ids(new Date(last + 1).toISOString())).not.toContain(many.sessionId);
		expect(ids(undefined, new Date(first - 1).toISOString())).not.toContain(many.sessionId);
		// A date alone is its whole UTC day.
		expect(ids("2026-03-09", "2026-03-09")).toEqual([many.sessionId]);
	});

	it("rejects an unknown session and bad paging", () => {
		expect(() => listSessions(view, { sessionId: "0190dddd-0000-7000-8000-000000000000" })).toThrow(QueryError);
		expect(() => listSessions(view, { limit: -1 })).toThrow(/^limit: /);
	});

	it("answers an empty list for a workspace without sessions", () => {
		const empty = buildQueryView(initialArchiveState());
		expect(listSessions(empty)).toEqual({ kind: "sessions", sessions: [], total: 0, offset: 0, limit: 20, nextOffset: null, clamped: false });
		expect(searchHistory(empty, { query: "anything" })).toEqual({
			kind: "hits",
			query: "anything",
			groups: [],
			total: 0,
			offset: 0,
			limit: 20,
			nextOffset: null,
			clamped: false,
		});
	});
});
