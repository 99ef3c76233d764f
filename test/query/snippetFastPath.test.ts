/**
 * `snippetAround` counts units instead of segmenting when a window holds only characters that are
 * graphemes on their own: it must give exactly what segmenting gives (the reference below is the
 * segmenting algorithm as it was before the fast path).
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { snippetAround } from "../../src/services/history/query/text.ts";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const segments = (text: string) => Array.from(graphemes.segment(text), (s) => s.segment);

function before(text: string, at: number, count: number) {
	for (let reach = count * 4; ; reach *= 2) {
		const from = Math.max(0, at - reach);
		let parts = segments(text.slice(from, at));
		if (from > 0) parts = parts.slice(1);
		if (parts.length >= count || from === 0) return { text: parts.slice(-count).join(""), cut: from > 0 || parts.length > count };
	}
}

function after(text: string, at: number, count: number) {
	for (let reach = count * 4; ; reach *= 2) {
		const to = Math.min(text.length, at + reach);
		let parts = segments(text.slice(at, to));
		if (to < text.length) parts = parts.slice(0, -1);
		if (parts.length >= count || to === text.length) return { text: parts.slice(0, count).join(""), cut: to < text.length || parts.length > count };
	}
}

function reference(text: string, start: number, end: number, context = 80) {
	const left = before(text, start, context);
	const right = after(text, end, context);
	const b = (left.cut ? "…" : "") + left.text;
	const matched = text.slice(start, end);
	return { text: b + matched + right.text + (right.cut ? "…" : ""), match: { start: b.length, length: matched.length } };
}

describe("snippetAround's fast path", () => {
	it("gives the segmenter's snippets for plain, CJK, accented and mixed texts of every length", () => {
		const rng = createRng(5);
		const pieces = ["word ", "The ", "\n", "\t", "é", "ß", "—", "…", "的", "日本", "이", "ｱ", "Ａ", "\r\n", "e\u0301", "👍🏽", "👨‍👩‍👧", "🇯🇵", "𝒜", "ｶﾞ", "\u3099", "ᄀ", "x"];
		for (let k = 0; k < 400; k++) {
			const simple = rng.chance(0.6);
			const parts: string[] = [];
			for (let n = rng.int(300); n > 0; n--) parts.push(simple ? (pieces[rng.int(13)] as string) : (pieces[rng.int(pieces.length)] as string));
			const text = parts.join("");
			if (text.length === 0) continue;
			// Match boundaries on code point boundaries, as search gives them.
			let start = rng.int(text.length);
			if (start > 0 && /[\udc00-\udfff]/.test(text.charAt(start))) start--;
			let end = Math.min(text.length, start + rng.int(12));
			if (end < text.length && /[\udc00-\udfff]/.test(text.charAt(end))) end++;
			for (const context of [80, 5]) expect(snippetAround(text, start, end, context), JSON.stringify(text.slice(0, 40))).toEqual(reference(text, start, end, context));
		}
	});
});
