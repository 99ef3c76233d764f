/**
 * `snippetAround` counts units instead of segmenting when a window holds only characters that are
 * graphemes on their own: it must give exactly what segmenting gives (the reference below is the
 * segmenting algorithm as it was before the fast path).
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { oneLine, snippetAround } from "../../src/services/history/query/text.ts";

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
		const pieces = [
			"word ",
			"The ",
			"\n",
			"\t",
			"é",
			"ß",
			"—",
			"…",
			"的",
			"日本",
			"이",
			"ｱ",
			"Ａ",
			"\r\n",
			"e\u0301",
			"👍🏽",
			"👨‍👩‍👧",
			"🇯🇵",
			"𝒜",
			"ｶﾞ",
			"\u3099",
			"ᄀ",
			"x",
			"👍",
			"🏽",
			"\ufe0f",
			"\u200d",
			"⚠️",
			"\u20dd",
			"𝅘𝅥",
			"\ud834\udd65",
		];
		// Emoji that stand alone (one grapheme each), for texts of simple characters and emoji.
		const emoji = ["🎉", "🚀", "😀", "🀄", "🧑", "🟠", "✓", "❌", "→", "ℯ", "⚠", "𝒜", "🇯"];
		for (let k = 0; k < 600; k++) {
			const kind = rng.int(3);
			const parts: string[] = [];
			const pick = () =>
				(kind === 0
					? pieces[rng.int(13)]
					: kind === 1
						? rng.chance(0.2)
							? emoji[rng.int(emoji.length - 1)]
							: pieces[rng.int(13)]
						: rng.chance(0.2)
							? emoji[rng.int(emoji.length)]
							: pieces[rng.int(pieces.length)]) as string;
			for (let n = rng.int(300); n > 0; n--) parts.push(pick());
			const text = parts.join("");
			if (text.length === 0) continue;
			// Match boundaries on code point boundaries, as search gives them.
			let start = rng.int(text.length);
			if (start > 0 && /[\udc00-\udfff]/.test(text.charAt(start))) start--;
			let end = Math.min(text.length, start + rng.int(12));
			if (end < text.length && /[\udc00-\udfff]/.test(text.charAt(end))) end++;
			for (const context of [80, 5])
				expect(snippetAround(text, start, end, context), JSON.stringify(text.slice(0, 40))).toEqual(reference(text, start, end, context));
		}
	});

	it("counts as one grapheme each only symbols that are: every code point of the extra ranges, beside each other and letters", () => {
		const ranges: [number, number][] = [
			[0x2100, 0x27bf],
			[0x1d400, 0x1d7ff],
			[0x1f000, 0x1fbff],
		];
		for (const [from, to] of ranges) {
			for (let cp = from; cp <= to; cp++) {
				if ((cp >= 0x1f1e6 && cp <= 0x1f1ff) || (cp >= 0x1f3fb && cp <= 0x1f3ff)) continue;
				const c = String.fromCodePoint(cp);
				expect(segments(`x${c}${c}y${c}.`).length, cp.toString(16)).toBe(6);
			}
		}
	});
});

/** `oneLine` as it was before its fast path: always segmenting. */
function oneLineSegmenting(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	if (flat.length <= max) return flat;
	const out: string[] = [];
	let length = 0;
	for (const g of segments(flat.slice(0, max + 16))) {
		if (length + g.length > max - 1) break;
		out.push(g);
		length += g.length;
	}
	return `${out.join("").trimEnd()}…`;
}

describe("oneLine's fast path", () => {
	it("cuts plain, CJK, accented, combining and emoji titles exactly where segmenting cuts them", () => {
		const pieces = ["Release owner ", "é", "e\u0301", "日本語", "👍🏽", "🇫🇷", "\r\n", "x", "  ", "Ünïcödé ", "a\u0300"];
		const rng = createRng("oneLine");
		for (let n = 0; n < 3000; n++) {
			let text = "";
			const length = rng.range(1, 60);
			for (let i = 0; i < length; i++) text += pieces[rng.int(pieces.length)];
			for (const max of [5, 20, 80, 100]) expect(oneLine(text, max), JSON.stringify([text, max])).toBe(oneLineSegmenting(text, max));
		}
	});
});
