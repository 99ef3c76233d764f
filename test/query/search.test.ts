import { beforeAll, describe, expect, it } from "vitest";
import type { QueryView } from "../../src/services/history/projections/queryView.ts";
import { searchHistory } from "../../src/services/history/query/search.ts";
import { listSessions } from "../../src/services/history/query/sessions.ts";
import type { SearchHit, SearchParams, SearchResult } from "../../src/services/history/query/types.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";
import {
	errorOf,
	bytesView,
	fixtureSessionId,
	fixtureView,
	isWellFormed,
	NATIVE_KEYS,
	qaByQuestion,
	qaNodes,
	qaText,
	summariesAt,
	summaryReady,
	withEvents,
} from "./helpers.ts";

function hits(view: QueryView, params: SearchParams): SearchResult {
	const result = searchHistory(view, params);
	if (result.kind !== "hits") throw new Error("expected hits");
	return result;
}

function allHits(result: SearchResult): SearchHit[] {
	return result.groups.flatMap((g) => g.hits);
}

/** Every hit of a search, page by page with the given limit, following `nextOffset`. */
function pageThrough(view: QueryView, params: SearchParams, limit: number): { hits: SearchHit[]; pages: SearchResult[] } {
	const pages: SearchResult[] = [];
	let offset: number | null = 0;
	while (offset !== null) {
		const page = hits(view, { ...params, offset, limit });
		pages.push(page);
		offset = page.nextOffset;
		if (pages.length > 100) throw new Error("paging does not end");
	}
	return { hits: pages.flatMap(allHits), pages };
}

const MANY = fixtureSessionId("many-qa-72");

describe("search over the fixtures", () => {
	let view: QueryView;
	beforeAll(async () => {
		view = await fixtureView(NATIVE_KEYS);
	});

	it("finds text in any input of a Q&A (here a steering message) and in its answer", () => {
		const steerSession = fixtureSessionId("steer-followup-abort");
		const result = hits(view, { query: "the VERSION file" });
		expect(allHits(result).map((h) => h.id)).toEqual([qaByQuestion(view, steerSession, "Build the project").id]);
		const hit = allHits(result)[0] as SearchHit;
		expect(hit.snippet.slice(hit.match.start, hit.match.start + hit.match.length)).toBe("the VERSION file");
		expect(hit).toMatchObject({ kind: "qa", level: 0, sessionId: steerSession, ready: true, completed: true });
		expect(hits(view, { query: "build, test, package, publish" }).total).toBe(1);
	});

	it("never matches tool output or thinking", () => {
		expect(hits(view, { query: "No such file or directory" }).total).toBe(0);
		expect(hits(view, { query: "I will run it with sh" }).total).toBe(0);
	});

	it("flags an unfinished Q&A with completed: false", () => {
		const hit = allHits(hits(view, { query: "slow integration suite" }))[0];
		expect(hit).toMatchObject({ kind: "qa", completed: false });
	});

	it("carries the session title: its /name, or its first question", () => {
		const named = allHits(hits(view, { query: "Read VERSION." })).find((h) => h.sessionId === fixtureSessionId("fork-source"));
		expect(named?.sessionTitle).toBe("Version bump planning");
		const untitled = allHits(hits(view, { query: "only shell script" }))[0];
		expect(untitled?.sessionTitle).toBe("Build the project and tell me if it passes.");
	});

	it("finds CJK and emoji and shows the original characters in the snippet", () => {
		const cjk = allHits(hits(view, { query: "发布负责人" }));
		expect(cjk).toHaveLength(1);
		expect(cjk[0]?.snippet).toContain("这个项目的发布负责人是谁？");
		const emoji = allHits(hits(view, { query: "😀😃😄" }));
		expect(emoji).toHaveLength(1);
		const h = emoji[0] as SearchHit;
		expect(h.snippet.slice(h.match.start, h.match.start + h.match.length)).toBe("😀😃😄");
		expect(isWellFormed(h.snippet)).toBe(true);
		expect(allHits(hits(view, { query: "ÜNÏCÖDÉ ÑAME" }))[0]?.snippet).toContain("Ünïcödé ñame");
	});

	it("trims the query but matches inner whitespace as written", () => {
		expect(hits(view, { query: "  only shell script \n" }).query).toBe("only shell script");
		expect(hits(view, { query: "  only shell script \n" }).total).toBe(1);
		expect(hits(view, { query: "only  shell script" }).total).toBe(0);
	});

	it("orders hits newest first within a level, stably (end time, then id)", () => {
		const result = hits(view, { query: "topic-0", sessionId: MANY, limit: 50 });
		const times = allHits(result).map((h) => Date.parse(h.endedAt));
		expect(times).toEqual([...times].sort((a, b) => b - a));
		expect(hits(view, { query: "topic-0", sessionId: MANY, limit: 50 })).toEqual(result);
	});

	describe("parameters at and beyond their bounds", () => {
		it("lists sessions instead of hits when the query is absent, empty or blank", () => {
			for (const query of [undefined, "", "   \t\n"]) expect(searchHistory(view, query === undefined ? {} : { query }).kind).toBe("sessions");
		});

		it("limits to 20 by default, allows 50, clamps 51 and says so", () => {
			expect(hits(view, { query: "topic" }).limit).toBe(20);
			expect(allHits(hits(view, { query: "topic" }))).toHaveLength(20);
			expect(hits(view, { query: "topic", limit: 50 })).toMatchObject({ limit: 50, clamped: false });
			const clamped = hits(view, { query: "topic", limit: 51 });
			expect(clamped).toMatchObject({ limit: 50, clamped: true });
			expect(allHits(clamped)).toHaveLength(50);
		});

		it("answers limit 0 with the count only, and no next offset to follow (it would loop)", () => {
			const count = hits(view, { query: "topic", limit: 0 });
			expect(count.groups).toEqual([]);
			expect(count.nextOffset).toBeNull();
			expect(listSessions(view, { limit: 0 })).toMatchObject({ sessions: [], nextOffset: null });
			expect(count.total).toBe(hits(view, { query: "topic", limit: 50 }).total);
		});

		it("rejects negative, fractional and non-numeric limits and offsets", () => {
			for (const limit of [-1, 2.5, Number.NaN, "x"]) expect(errorOf(() => searchHistory(view, { query: "topic", limit })).parameter).toBe("limit");
			for (const offset of [-1, 0.5, "-3"]) expect(errorOf(() => searchHistory(view, { query: "topic", offset })).parameter).toBe("offset");
		});

		it("answers an offset at or past the end with an empty page and nextOffset null", () => {
			const total = hits(view, { query: "topic", limit: 0 }).total;
			for (const offset of [total, total + 1, 10_000]) expect(hits(view, { query: "topic", offset })).toMatchObject({ groups: [], nextOffset: null, total });
			const last = hits(view, { query: "topic", offset: total - 1 });
			expect(allHits(last)).toHaveLength(1);
			expect(last.nextOffset).toBeNull();
		});

		it("filters by session, and rejects an unknown or malformed session id", () => {
			const result = hits(view, { query: "VERSION", sessionId: fixtureSessionId("fork") });
			expect(result.total).toBeGreaterThan(0);
			expect(new Set(allHits(result).map((h) => h.sessionId))).toEqual(new Set([fixtureSessionId("fork")]));
			const unknown = errorOf(() => searchHistory(view, { query: "x", sessionId: "019c0000-0000-7000-8000-000000000000" }));
			expect(unknown).toMatchObject({ code: "UNKNOWN_ID", parameter: "sessionId" });
			expect(unknown.message).toBe('sessionId: unknown session "019c0000-0000-7000-8000-000000000000"');
			expect(errorOf(() => searchHistory(view, { query: "x", sessionId: "../etc/passwd" }))).toMatchObject({ code: "BAD_PARAMETER", parameter: "sessionId" });
			// Also without a query (the session list).
			expect(errorOf(() => searchHistory(view, { sessionId: "nope" })).code).toBe("UNKNOWN_ID");
		});

		it("rejects bad dates and from after to, instead of answering nothing", () => {
			expect(errorOf(() => searchHistory(view, { query: "x", from: "2026-13-01" })).message).toMatch(/^from: "2026-13-01" is not an ISO-8601 date/);
			expect(errorOf(() => searchHistory(view, { query: "x", to: "soon" })).parameter).toBe("to");
			expect(errorOf(() => searchHistory(view, { query: "x", from: "2026-03-10", to: "2026-03-09" })).parameter).toBe("from");
		});
	});

	describe("time range", () => {
		// A Q&A with a start before its end: the long answer took a while.
		let target: { id: string; startMs: number; endMs: number };
		beforeAll(() => {
			const qa = qaNodes(view, MANY).find((q) => q.parts[0]?.text.includes("topic-010"));
			if (!qa) throw new Error("fixture changed");
			target = { id: qa.id, startMs: Date.parse(qa.startedAt), endMs: Date.parse(qa.endedAt) };
			expect(target.endMs).toBeGreaterThan(target.startMs + 1);
		});
		const iso = (ms: number) => new Date(ms).toISOString();
		const ids = (params: SearchParams) => allHits(hits(view, { query: "topic-010", sessionId: MANY, limit: 50, ...params })).map((h) => h.id);

		it("keeps a node that starts before from and ends after it", () => {
			expect(ids({ from: iso(target.startMs + 1) })).toContain(target.id);
			expect(ids({ to: iso(target.endMs - 1) })).toContain(target.id);
			expect(ids({ from: iso(target.startMs + 1), to: iso(target.endMs - 1) })).toContain(target.id);
		});

		it("includes both edges and drops a node just outside", () => {
			expect(ids({ from: iso(target.endMs) })).toContain(target.id);
			expect(ids({ from: iso(target.endMs + 1) })).not.toContain(target.id);
			expect(ids({ to: iso(target.startMs) })).toContain(target.id);
			expect(ids({ to: iso(target.startMs - 1) })).not.toContain(target.id);
		});

		it("reads a date alone as the whole UTC day", () => {
			const day = iso(target.startMs).slice(0, 10);
			expect(ids({ from: day, to: day })).toContain(target.id);
			const dayBefore = iso(target.startMs - 86_400_000).slice(0, 10);
			expect(ids({ to: dayBefore })).toEqual([]);
		});

		it("takes offsets into account", () => {
			const plusOne = new Date(target.endMs + 3_600_000).toISOString().replace("Z", "+01:00");
			expect(ids({ from: plusOne })).toContain(target.id);
		});
	});
});

describe("summary hits", () => {
	let view: QueryView;
	let l2: ReturnType<typeof summariesAt>;
	let l1: ReturnType<typeof summariesAt>;
	beforeAll(async () => {
		const base = await fixtureView(["many-qa-72"]);
		l1 = summariesAt(base, MANY, 1);
		l2 = summariesAt(base, MANY, 2);
		expect(l1).toHaveLength(18);
		expect(l2).toHaveLength(4);
		view = withEvents(base, [
			// Covers Q&A 1–16: topic-003 is in its originals, "zebra plan" is not anywhere.
			summaryReady(l2[0] as (typeof l2)[number], "Status review of modules 1 to 16; topic-003 was settled and a Zebra Plan was floated."),
			// Covers Q&A 17–32: it mentions topic-003, which none of its originals do.
			summaryReady(l2[1] as (typeof l2)[number], "Follow-up of modules 17 to 32, referring back to TOPIC-003."),
			// Covers Q&A 1–4.
			summaryReady(l1[0] as (typeof l1)[number], "Modules 1 to 4: topic-003 discussed."),
		]);
	});

	it("returns a match in a level-2 summary in the level-2 group", () => {
		const result = hits(view, { query: "zebra plan" });
		expect(result.groups.map((g) => g.level)).toEqual([2]);
		expect(result.groups[0]?.hits.map((h) => h.id)).toEqual([l2[0]?.id]);
		expect(result.groups[0]?.hits[0]).toMatchObject({ kind: "summary", level: 2, ready: true, completed: true });
	});

	it("flags verified only when the matched text is in an original the summary covers", () => {
		expect(allHits(hits(view, { query: "zebra plan" }))[0]?.verified).toBe(false);
		const result = hits(view, { query: "topic-003" });
		expect(result.groups.map((g) => g.level)).toEqual([0, 1, 2]);
		const level2 = result.groups.find((g) => g.level === 2)?.hits ?? [];
		expect(Object.fromEntries(level2.map((h) => [h.id, h.verified]))).toEqual({ [l2[0]?.id as string]: true, [l2[1]?.id as string]: false });
		expect(result.groups.find((g) => g.level === 1)?.hits[0]).toMatchObject({ id: l1[0]?.id, verified: true });
		// Originals carry no verified flag.
		expect(result.groups[0]?.hits.every((h) => !("verified" in h))).toBe(true);
	});

	it("matches summaries only once they have text (pending ones have none)", () => {
		// "modules" is in the three ready texts only (the originals say "module-001").
		const result = hits(view, { query: "modules" });
		expect(new Set(allHits(result).map((h) => h.id))).toEqual(new Set([l2[0]?.id, l2[1]?.id, l1[0]?.id]));
		expect(allHits(result).every((h) => h.kind === "summary" && h.ready)).toBe(true);
	});

	it("pages over the groups concatenated: every hit once, in level order, newest first within a level", () => {
		const params = { query: "topic-0", sessionId: MANY };
		const expectedOriginals = qaNodes(view, MANY)
			.filter((q) => qaText(q).toLowerCase().includes("topic-0"))
			.sort((a, b) => Date.parse(b.endedAt) - Date.parse(a.endedAt) || (a.id < b.id ? -1 : 1))
			.map((q) => q.id);
		expect(expectedOriginals).toHaveLength(72);
		const expectedSummaries = [l1[0]?.id, l2[1]?.id, l2[0]?.id];
		for (const limit of [1, 7, 20, 50]) {
			const { hits: paged, pages } = pageThrough(view, params, limit);
			expect(paged.map((h) => h.id)).toEqual([...expectedOriginals, ...expectedSummaries]);
			expect(new Set(paged.map((h) => h.id)).size).toBe(paged.length);
			for (const page of pages) {
				expect(page.total).toBe(75);
				expect(page.groups.every((g) => g.hits.length > 0)).toBe(true);
				expect(page.groups.map((g) => g.level)).toEqual([...page.groups.map((g) => g.level)].sort());
			}
		}
	});

	it("flags a summary over an unfinished Q&A as completed: false", async () => {
		const id = "0190cccc-0000-7000-8000-000000000001";
		const lines = [header(id), user("u1", null, "q1"), reply("a1", "u1", "r1"), user("u2", "a1", "q2"), reply("a2", "u2", "r2")];
		lines.push(user("u3", "a2", "q3"), reply("a3", "u3", "r3"), user("u4", "a3", "q4 left unanswered"));
		const base = await bytesView([jsonl(lines)]);
		const summary = summariesAt(base, id, 1)[0];
		if (!summary) throw new Error("no summary planned over an open Q&A");
		const v = withEvents(base, [summaryReady(summary, "A marker-xyz summary.")]);
		expect(allHits(hits(v, { query: "q4 left" }))[0]).toMatchObject({ kind: "qa", completed: false });
		expect(allHits(hits(v, { query: "marker-xyz" }))[0]).toMatchObject({ kind: "summary", completed: false, ready: true });
		const done = await bytesView([jsonl([...lines, reply("a4", "u4", "r4")])]);
		const doneSummary = summariesAt(done, id, 1)[0] as typeof summary;
		const v2 = withEvents(done, [summaryReady(doneSummary, "A marker-xyz summary.")]);
		expect(allHits(hits(v2, { query: "marker-xyz" }))[0]).toMatchObject({ kind: "summary", completed: true });
	});
});

describe("fork and clone duplicates", () => {
	let view: QueryView;
	const source = fixtureSessionId("fork-source");
	const fork = fixtureSessionId("fork");
	const clone = fixtureSessionId("clone-at-user");
	beforeAll(async () => {
		view = await fixtureView(["fork-source", "fork", "clone-at-user"]);
	});

	it("shows a Q&A copied into forks once, from the oldest session", () => {
		const result = hits(view, { query: "VERSION is 1.4.2" });
		expect(allHits(result).map((h) => h.sessionId)).toEqual([source]);
		expect(result.total).toBe(1);
	});

	it("keeps what only the fork has, and a copy that differs (a question the clone cut off)", () => {
		expect(allHits(hits(view, { query: "README badge" })).map((h) => h.sessionId)).toEqual([fork]);
		const changelog = allHits(hits(view, { query: "And the changelog entry?" }));
		expect(changelog.map((h) => [h.sessionId, h.completed]).sort()).toEqual(
			[
				[source, true],
				[clone, false],
			].sort(),
		);
	});

	it("shows the fork's copy when the search is limited to the fork", () => {
		expect(allHits(hits(view, { query: "VERSION is 1.4.2", sessionId: fork })).map((h) => h.sessionId)).toEqual([fork]);
	});
});

describe("case folding end to end", () => {
	let view: QueryView;
	beforeAll(async () => {
		const id = "0190bbbb-0000-7000-8000-00000000000f";
		view = await bytesView([
			jsonl([
				header(id),
				user("u1", null, "Grüße aus KÖLN: ÄÖ and äö"),
				reply("a1", "u1", "Noted."),
				user("u2", "a1", "A trip to İSTANBUL, then more text"),
				reply("a2", "u2", "Have a nice trip."),
				user("u3", "a2", "Full-width ＡＢＣ letters"),
				reply("a3", "u3", "Seen."),
				user("u4", "a3", "中文测试 and 日本語"),
				reply("a4", "u4", "好的"),
				user("u5", "a4", "Meet at the cafe\u0301 on rue Saint-Andre\u0301?"),
				reply("a5", "u5", "Yes."),
				user("u6", "a5", "The caf\u00e9 again?"),
				reply("a6", "u6", "Sure."),
			]),
		]);
	});
	const texts = (query: string) => allHits(hits(view, { query })).map((h) => h.snippet.slice(h.match.start, h.match.start + h.match.length));

	it("matches ÄÖ and äö whichever case is typed", () => {
		expect(texts("äö").sort()).toEqual(["ÄÖ"]);
		expect(texts("ÖLN: äö and ÄÖ".slice(0, 3))).toEqual(["ÖLN"]);
		expect(texts("KÖLN: ÄÖ AND ÄÖ")).toEqual(["KÖLN: ÄÖ and äö"]);
	});

	it("finds İ by i̇ and by itself, and shows the text after it at the right offsets", () => {
		expect(texts("i̇stanbul")).toEqual(["İSTANBUL"]);
		expect(texts("İstanbul, THEN")).toEqual(["İSTANBUL, then"]);
		expect(texts("then more")).toEqual(["then more"]);
	});

	it("folds full-width letters only to full-width", () => {
		expect(texts("ａｂｃ")).toEqual(["ＡＢＣ"]);
		expect(texts("abc")).toEqual([]);
	});

	it("matches é typed precomposed or as e + U+0301, whichever way the text has it (NFC)", () => {
		expect(texts("café").sort()).toEqual(["caf\u00e9", "cafe\u0301"].sort());
		expect(texts("cafe\u0301").sort()).toEqual(["caf\u00e9", "cafe\u0301"].sort());
		expect(texts("andré?")).toEqual(["Andre\u0301?"]);
	});

	it("matches CJK unchanged", () => {
		expect(texts("测试 and 日本")).toEqual(["测试 and 日本"]);
		expect(texts("好的")).toEqual(["好的"]);
	});
});
