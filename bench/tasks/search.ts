/**
 * Search over node-scaled corpora: the index against the scan (context) and, in the parent,
 * against `rg -i -F` over the same raw files (the baseline).
 *
 * The query set is drawn with a fixed seed from the corpus itself — what a person remembers and
 * types: phrases cut from answers and questions (some upper-cased), identifiers (as often as they
 * occur), CJK fragments, common words, long phrases, and queries that match nothing. Queries
 * shorter than a trigram are timed separately (they take the arena scan).
 */
import { searchHistory } from "../../src/services/history/query/index.ts";
import { ngramSearchIndex } from "../../src/services/history/query/ngramSearchIndex.ts";
import { scanSearchIndex } from "../../src/services/history/query/searchIndex.ts";
import type { QueryView } from "../../src/services/history/queryView.ts";
import { createRng, type Rng } from "../generator/prng.ts";
import { identifier } from "../generator/text.ts";
import { discardingStore, folderBytes, peakRss, workspaceService } from "./wiring.ts";

export const SHORT_QUERIES = ["a", "e", "的", "ok", "id", "x", "ts", "中", "db", "Go"];
const COMMON = ["error", "config", "session", "test", "cache", "function", "should", "because", "the user", "import"];

export interface QueryTiming {
	readonly query: string;
	readonly ms: number;
	readonly hits: number;
}

export interface SearchResultSet {
	readonly nodes: number;
	readonly files: number;
	readonly bytes: number;
	readonly ingestMs: number;
	readonly indexBuildMs: number;
	readonly index: { readonly documents: number; readonly trigrams: number; readonly memoryBytes: number };
	readonly heapUsed: number;
	readonly peakRss: number;
	readonly queries: readonly QueryTiming[];
	readonly short: readonly QueryTiming[];
	readonly scan: readonly QueryTiming[];
}

/** Texts of the Q&A in the view (for cutting phrases). */
function texts(view: QueryView): string[] {
	const out: string[] = [];
	for (const archive of Object.values(view.state.sessions)) for (const qa of Object.values(archive.nodes)) out.push(qa.parts.map((p) => p.text).join("\n\n"));
	return out;
}

function phrase(rng: Rng, all: readonly string[], words: [number, number]): string {
	for (;;) {
		const text = all[rng.int(all.length)] as string;
		const tokens = text.split(/\s+/).filter((t) => t.length > 0 && !t.startsWith("```"));
		if (tokens.length < words[1]) continue;
		const n = rng.range(words[0], words[1]);
		const at = rng.int(tokens.length - n + 1);
		const q = tokens.slice(at, at + n).join(" ").replace(/^[`*#(-]+|[`*.,:;!?)]+$/g, "");
		if (q.length >= 4 && q.length <= 60) return q;
	}
}

function cjk(rng: Rng, all: readonly string[]): string | undefined {
	for (let tries = 0; tries < 200; tries++) {
		const text = all[rng.int(all.length)] as string;
		const m = /[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{6,}/.exec(text.slice(rng.int(Math.max(1, text.length - 40))));
		if (m) {
			const len = rng.range(3, 6);
			const at = rng.int(m[0].length - len + 1);
			return m[0].slice(at, at + len);
		}
	}
	return undefined;
}

/** The query set of a corpus (deterministic for a view and a count). */
export function buildQueries(view: QueryView, count: number): string[] {
	const rng = createRng(`queries-${count}`);
	const all = texts(view);
	const out: string[] = [];
	while (out.length < count) {
		const r = rng.next();
		if (r < 0.3) out.push(phrase(rng, all, [2, 4]));
		else if (r < 0.4) out.push(phrase(rng, all, [2, 4]).toUpperCase());
		else if (r < 0.6) out.push(identifier(rng, 2.4));
		else if (r < 0.7) out.push(cjk(rng, all) ?? phrase(rng, all, [2, 3]));
		else if (r < 0.8) out.push(COMMON[rng.int(COMMON.length)] as string);
		else if (r < 0.9) out.push(`${identifier(rng, 1.5)}-zq${rng.int(1000)}`);
		else out.push(phrase(rng, all, [6, 10]));
	}
	return out;
}

function timeQueries(view: QueryView, queries: readonly string[], index: ReturnType<typeof ngramSearchIndex> | ReturnType<typeof scanSearchIndex>, repeats: number): QueryTiming[] {
	return queries.map((query) => {
		const times: number[] = [];
		let hits = 0;
		for (let r = 0; r < repeats; r++) {
			const s = performance.now();
			const result = searchHistory(view, { query }, index);
			times.push(performance.now() - s);
			hits = result.kind === "hits" ? result.total : 0;
		}
		times.sort((a, b) => a - b);
		return { query, ms: times[Math.floor(times.length / 2)] as number, hits };
	});
}

export async function searchCorpus(corpusDir: string, workspace: string, count: number, scanQueries: number): Promise<SearchResultSet> {
	const { files, bytes } = folderBytes(corpusDir);
	const { service } = workspaceService(workspace, corpusDir, { store: discardingStore() });
	const t0 = performance.now();
	await service.load();
	await service.ingest();
	const t1 = performance.now();
	const view = service.getView();
	const index = ngramSearchIndex();
	searchHistory(view, { query: "zzzq" }, index);
	const t2 = performance.now();
	const queries = buildQueries(view, count);
	// One untimed pass first: the timed ones measure the code as it runs once compiled (rg, likewise,
	// runs once before it is timed, to warm the page cache).
	timeQueries(view, [...queries, ...SHORT_QUERIES], index, 1);
	const timed = timeQueries(view, queries, index, 3);
	const short = timeQueries(view, SHORT_QUERIES, index, 3);
	const scan = timeQueries(view, queries.slice(0, scanQueries), scanSearchIndex(), 1);
	const stats = index.stats();
	let nodes = 0;
	for (const a of Object.values(view.state.sessions)) nodes += Object.keys(a.nodes).length;
	return {
		nodes,
		files: files.length,
		bytes,
		ingestMs: t1 - t0,
		indexBuildMs: t2 - t1,
		index: { documents: stats.documents, trigrams: stats.trigrams, memoryBytes: stats.memoryBytes },
		heapUsed: process.memoryUsage().heapUsed,
		peakRss: peakRss(),
		queries: timed,
		short,
		scan,
	};
}
