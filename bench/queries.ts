/**
 * The query mix of the search benchmarks, drawn with a fixed seed from the archived Q&A texts —
 * what a person remembers and types: phrases cut from answers and questions (some upper-cased),
 * identifiers (as often as they occur), CJK fragments, common words, long phrases, and queries
 * that match nothing. Built from plain texts (the archives' JSON read by the bench itself), so it
 * depends on no query code of `src`.
 */
import { createRng, type Rng } from "./generator/prng.ts";
import { identifier } from "./generator/text.ts";

export const COMMON_WORDS = ["error", "config", "session", "test", "cache", "function", "should", "because", "the user", "import"];

export const QUERY_MIX =
	"30 % phrases of 2–4 words cut from Q&A texts, 10 % the same upper-cased, 20 % identifiers (as often as they occur), 10 % CJK fragments of 3–6 characters, 10 % common words (error, config, session, test, cache, function, should, because, the user, import), 10 % identifiers that match nothing, 10 % phrases of 6–10 words";

function phrase(rng: Rng, all: readonly string[], words: [number, number]): string {
	for (let tries = 0; tries < 10_000; tries++) {
		const text = all[rng.int(all.length)] as string;
		const tokens = text.split(/\s+/).filter((t) => t.length > 0 && !t.startsWith("```"));
		if (tokens.length < words[1]) continue;
		const n = rng.range(words[0], words[1]);
		const at = rng.int(tokens.length - n + 1);
		const q = tokens
			.slice(at, at + n)
			.join(" ")
			.replace(/^[`*#(-]+|[`*.,:;!?)]+$/g, "");
		if (q.length >= 4 && q.length <= 60) return q;
	}
	return COMMON_WORDS[rng.int(COMMON_WORDS.length)] as string;
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

/**
 * `count` queries drawn from `texts` (deterministic for the same texts, count and label). A query
 * never starts with `-` (it is passed to the CLI and to rg as an argument).
 */
export function buildQueries(texts: readonly string[], count: number, label = "queries"): string[] {
	const rng = createRng(`${label}-${count}`);
	const all = texts.filter((t) => t.length > 0);
	const out: string[] = [];
	if (all.length === 0) return COMMON_WORDS.slice(0, count);
	while (out.length < count) {
		const r = rng.next();
		let q: string;
		if (r < 0.3) q = phrase(rng, all, [2, 4]);
		else if (r < 0.4) q = phrase(rng, all, [2, 4]).toUpperCase();
		else if (r < 0.6) q = identifier(rng, 2.4);
		else if (r < 0.7) q = cjk(rng, all) ?? phrase(rng, all, [2, 3]);
		else if (r < 0.8) q = COMMON_WORDS[rng.int(COMMON_WORDS.length)] as string;
		else if (r < 0.9) q = `${identifier(rng, 1.5)}-zq${rng.int(1000)}`;
		else q = phrase(rng, all, [6, 10]);
		q = q.replace(/^-+/, "").trim();
		if (q.length > 0) out.push(q);
	}
	return out;
}
