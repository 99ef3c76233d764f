/**
 * The n-gram index must give exactly the scan's answers: same hits, same order, same snippets,
 * same paging, on Pi's own files and on generated sessions, and after the view changes.
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { generateSession } from "../../bench/generator/session.ts";
import { applyArchiveEvents, type SummaryRecord } from "../../src/services/history/archive.ts";
import type { HistoryEvent } from "../../src/services/history/events.ts";
import { ngramSearchIndex, scanSearchIndex, searchHistory, type SearchIndex, type SearchParams } from "../../src/services/history/query/index.ts";
import { buildQueryView, type QueryView } from "../../src/services/history/queryView.ts";
import { header, jsonl, replayEvents, reply, user } from "../helpers/entries.ts";
import { bytesView, fixtureIndex, fixtureSessionId, fixtureView, summaryReady } from "./helpers.ts";

const encoder = new TextEncoder();
const ALL_KEYS = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");

/** Queries of every kind: short (below a trigram), exact trigrams, phrases, CJK, case and Unicode folds, absent. */
const QUERIES = [
	"a", "e", "的", "İ", "σ", "ok", "ß", "😀", "👍🏽", "𝒜",
	"the", "ing", "Ship", "HELLO", "rotate", "version", "1.4.2", "release owner", "dana whitfield", "hello from acme",
	"topic-01", "kw01", "note-0042", "payload-0", "END-OF-LONG-ANSWER", "module-07", "greet.js", "missing.txt", "no such file",
	"这", "이미지", "日本語", "ΟΔΟΣ", "οδος", "İstanbul", "i̇", "𝒜𝒸𝓂ℯ", "\u00e9", "e\u0301",
	"zzzz-not-there", "qqq", "\ufffd", "\ud83d", "half \ud83d pair", " ", "  ", "\n\n", "the the",
];

function expectSame(view: QueryView, params: SearchParams, ngram = ngramSearchIndex()): void {
	const scan = searchHistory(view, params, scanSearchIndex());
	const fast = searchHistory(view, params, ngram);
	expect(fast, JSON.stringify(params)).toEqual(scan);
}

/** A view of generated sessions (agent and chat profiles), with some summaries made ready. */
async function generatedView(seed: number): Promise<QueryView> {
	const events: HistoryEvent[] = [];
	for (let i = 0; i < 4; i++) {
		const lines: string[] = [];
		const profile = i % 2 === 0 ? "agent" : "chat";
		generateSession(createRng(seed * 10 + i), { profile, targetBytes: 300_000, targetQa: profile === "chat" ? 60 : undefined, startMs: Date.UTC(2025, 0, 1 + i) } as never, (l) => lines.push(l));
		events.push(...(await replayEvents(encoder.encode(`${lines.join("\n")}\n`))));
	}
	let state = applyArchiveEvents({ sessions: {} }, events);
	const summaries = Object.values(state.sessions).flatMap((a) => Object.values(a.summaries)) as SummaryRecord[];
	state = applyArchiveEvents(state, summaries.filter((_, i) => i % 2 === 0).map((s, i) => summaryReady(s, `Summary ${i}: the session discussed ${s.id.slice(3, 9)} and the Release Owner ΟΔΟΣ 的 İ.`)));
	return buildQueryView(state);
}

/** Phrases cut from the view's own texts: what a person remembers and types. */
function phrasesOf(view: QueryView, count: number, seed: number): string[] {
	const rng = createRng(seed);
	const texts = Object.values(view.state.sessions).flatMap((a) => Object.values(a.nodes).map((n) => n.parts.map((p) => p.text).join("\n\n")));
	const out: string[] = [];
	while (out.length < count) {
		const text = texts[rng.int(texts.length)] as string;
		if (text.length < 4) continue;
		const at = rng.int(text.length - 3);
		out.push(text.slice(at, at + rng.range(1, 30)));
	}
	return out;
}

describe("ngramSearchIndex", () => {
	it("finds exactly what the scan finds on Pi's own files, query by query", async () => {
		const view = await fixtureView(ALL_KEYS);
		const index = ngramSearchIndex();
		// Trigrams alone: the path every needle took before word lists and junctions.
		const trigrams = ngramSearchIndex({ words: false, junctions: false });
		const sources = ngramSearchIndex({ fewEnough: 0 });
		for (const query of QUERIES) {
			expectSame(view, { query }, index);
			expectSame(view, { query, limit: 3, offset: 1 }, index);
			expectSame(view, { query }, trigrams);
			expectSame(view, { query }, sources);
		}
		for (const query of phrasesOf(view, 150, 1)) {
			expectSame(view, { query }, index);
			expectSame(view, { query }, sources);
		}
	});

	it("finds exactly what the scan finds on generated sessions, with summaries, filters and paging", async () => {
		const view = await generatedView(1);
		const index = ngramSearchIndex();
		const sources = ngramSearchIndex({ fewEnough: 0 });
		const sessionId = Object.keys(view.state.sessions)[1] as string;
		for (const query of [...QUERIES, ...phrasesOf(view, 250, 2)]) {
			expectSame(view, { query }, index);
			expectSame(view, { query, limit: 50, offset: 20 }, index);
			expectSame(view, { query }, sources);
		}
		for (const query of ["the", "Summary", "session", "error", "config"]) {
			expectSame(view, { query, sessionId }, index);
			expectSame(view, { query, from: "2025-01-02", to: "2025-01-03T12:00Z" }, index);
			expectSame(view, { query, limit: 0 }, index);
			for (let offset = 0; offset < 120; offset += 37) expectSame(view, { query, offset, limit: 7 }, index);
		}
		expect(index.stats?.()).toBeDefined();
	});

	it("answers from the index (not by falling back to the scan) and ranks a page of thousands of hits as a full sort does", async () => {
		const events: HistoryEvent[] = [];
		for (let i = 0; i < 30; i++) {
			const lines: string[] = [];
			generateSession(createRng(500 + i), { profile: "chat", targetQa: 100, startMs: Date.UTC(2025, 1, 1 + i) }, (l) => lines.push(l));
			events.push(...(await replayEvents(encoder.encode(`${lines.join("\n")}\n`))));
		}
		const view = buildQueryView(applyArchiveEvents({ sessions: {} }, events));
		const index = ngramSearchIndex();
		let answered = 0;
		const counting: SearchIndex = {
			...index,
			ranked: (v, n, f, k) => {
				const r = index.ranked?.(v, n, f, k);
				if (r) answered++;
				return r;
			},
		};
		for (const query of ["e", "the", " the ", "and", "config", "ok", "error", "session", "should", "db", "x", "config_", "test"]) {
			const result = searchHistory(view, { query, offset: 0, limit: 50 }, counting);
			expect(result.kind === "hits" && result.total > 0).toBe(true);
			expectSame(view, { query, limit: 50 }, index);
			expectSame(view, { query, offset: 250, limit: 50 }, index);
		}
		expect(answered).toBe(13);
		// Without word lists and junctions (trigrams and checks alone): the same answers.
		const trigrams = ngramSearchIndex({ words: false, junctions: false });
		for (const query of ["error", "session", "config", "config_", "test", "kw01", "e", "x", "ok", "rotate", "zzzq", "the user", "on do"]) {
			expectSame(view, { query }, trigrams);
			expectSame(view, { query, offset: 40, limit: 9 }, trigrams);
		}
		const big = searchHistory(view, { query: "e" }, index);
		expect(big.kind === "hits" && big.total).toBeGreaterThan(2_000);
	});

	it("follows the view as it changes: new sessions, summaries made ready, sessions gone", async () => {
		const index = ngramSearchIndex();
		let view = await fixtureView(["many-qa-72", "tools-thinking"]);
		expectSame(view, { query: "topic-0" }, index);
		const more = await fixtureView(["many-qa-72", "tools-thinking", "unicode-image", "long-answer"]);
		view = buildQueryView(more.state, view);
		for (const query of ["topic-0", "image", "note-06", "이미지"]) expectSame(view, { query }, index);
		const summary = Object.values(view.state.sessions).flatMap((a) => Object.values(a.summaries))[0] as SummaryRecord;
		view = buildQueryView(applyArchiveEvents(view.state, [summaryReady(summary, "A brand-new summary about Zebras.")]), view);
		expectSame(view, { query: "zebras" }, index);
		view = buildQueryView(applyArchiveEvents(view.state, [summaryReady(summary, "Rewritten: now about giraffes.")]), view);
		expectSame(view, { query: "zebras" }, index);
		expectSame(view, { query: "giraffes" }, index);
		const { [summary.sessionId]: _gone, ...rest } = view.state.sessions;
		view = buildQueryView({ sessions: rest }, view);
		for (const query of ["giraffes", "topic-0", "image"]) expectSame(view, { query }, index);
	});

	it("finds phrases across word junctions exactly: edge words that are a longer word's end or start, short words, separators", async () => {
		const fixed = [
			"bathe users now", "the use of it", "The User, again", "on done", "button docs", "on do", "ondo", "on\tdo", "on  do",
			"the    user", "is its how", "this its however", "is itsy how", "café au lait", "a b c", "e u", "x_1 do", "ab, an. is",
		];
		const rng = createRng(77);
		const vocabulary = ["the", "bathe", "user", "users", "use", "on", "do", "done", "button", "a", "an", "is", "its", "how", "x_1", "ab", "E", "ΟΔΟΣ", "的"];
		const separators = [" ", " ", " ", ", ", ". ", "\n", "  ", " - ", "    ", "é ", "-"];
		const random = () => {
			const words: string[] = [];
			for (let n = rng.range(1, 12); n > 0; n--) words.push((vocabulary[rng.int(vocabulary.length)] as string) + (separators[rng.int(separators.length)] as string));
			return words.join("").trim();
		};
		const texts = [...fixed, ...Array.from({ length: 300 }, random)];
		const id = "0190dddd-0000-7000-8000-000000000001";
		const lines: unknown[] = [header(id)];
		let parent: string | null = null;
		texts.forEach((text, i) => {
			lines.push(user(`u${i}`, parent, text), reply(`a${i}`, `u${i}`, i % 3 === 0 ? random() : "ok"));
			parent = `a${i}`;
		});
		const view = await bytesView([jsonl(lines)]);
		const index = ngramSearchIndex();
		// Every source of candidates looked at, however rare the rarest trigram (as in a large index).
		const sources = ngramSearchIndex({ fewEnough: 0 });
		const trigrams = ngramSearchIndex({ words: false, junctions: false });
		const queries = [
			"the user", "THE USER", "he user", "the use", "e us", "on do", "n do", "on d", "is its how", "s its h", "its how", "é au", "au la", "a b", "a b c", "b c",
			" the user", "the user.", ", the", "user, a", "on  do", "the    user", "x_1 do", "ab, an", "an. is", "do ondo",
			...Array.from({ length: 200 }, () => {
				const text = texts[rng.int(texts.length)] as string;
				const at = rng.int(text.length);
				return text.slice(at, at + rng.range(3, 16));
			}),
			...Array.from({ length: 100 }, () => random().slice(0, 24)),
		];
		for (const query of queries) {
			if (query.trim() === "") continue;
			expectSame(view, { query, limit: 100 }, index);
			expectSame(view, { query, limit: 100 }, sources);
			expectSame(view, { query, limit: 100 }, trigrams);
		}
		const found = searchHistory(view, { query: "the user", limit: 100 }, sources);
		const snippets = found.kind === "hits" ? found.groups.flatMap((g) => g.hits.map((h) => h.snippet)) : [];
		expect(snippets.some((s) => s.includes("bathe users now"))).toBe(true);
		expect(snippets.some((s) => s.includes("The User, again"))).toBe(true);
	});

	it("counts a large result word by word only where no document needs a look of its own (fork copies, forgotten documents)", async () => {
		const keys = ["many-qa-72", "fork-source", "fork", "clone-at-user", "tools-thinking"];
		let view = await fixtureView(keys);
		const index = ngramSearchIndex();
		const forkTexts = Object.values(view.state.sessions)
			.filter((a) => a.session.parentSessionId !== undefined)
			.flatMap((a) => Object.values(a.nodes).map((n) => n.parts.map((p) => p.text).join(" ")));
		const words = [...new Set(forkTexts.join(" ").toLowerCase().match(/[a-z0-9_]{3,}/g) ?? [])];
		expect(words.length).toBeGreaterThan(10);
		const check = () => {
			for (const query of words) {
				expectSame(view, { query, limit: 1 }, index);
				expectSame(view, { query, limit: 0 }, index);
			}
		};
		check();
		// Sessions gone and back: their documents are forgotten and indexed again under new numbers.
		const { [fixtureSessionId("fork-source")]: _gone, ...rest } = view.state.sessions;
		view = buildQueryView({ sessions: rest }, view);
		check();
		view = buildQueryView((await fixtureView(keys)).state, view);
		check();
	});
});
