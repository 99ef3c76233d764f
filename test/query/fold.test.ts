import { describe, expect, it } from "vitest";
import { foldQuery, foldText, originalRange } from "../../src/services/history/query/fold.ts";
import { snippetAround, sliceUtf16 } from "../../src/services/history/query/text.ts";
import { isWellFormed } from "./helpers.ts";

/** Where a query matches in a text, as original offsets (what search does, in small). */
function find(text: string, query: string): string | undefined {
	const folded = foldText(text);
	const needle = foldQuery(query);
	const at = folded.folded.indexOf(needle);
	if (at < 0) return undefined;
	const r = originalRange(text, folded, at, needle.length);
	return text.slice(r.start, r.end);
}

describe("case folding", () => {
	it("matches ÄÖ and äö both ways and maps back to the original letters", () => {
		expect(find("Grüße aus KÖLN, ÄÖÜ!", "äöü")).toBe("ÄÖÜ");
		expect(find("schön und äöü", "ÄÖÜ")).toBe("äöü");
		expect(find("KÖLN", "köln")).toBe("KÖLN");
	});

	it("folds İ to i̇ (two code units) and keeps the offsets after it right", () => {
		const text = "İstanbul İzmir TRIP";
		const folded = foldText(text);
		expect(folded.folded).toBe("i̇stanbul i̇zmir trip");
		expect(folded.folded.length).toBe(text.length + 2);
		expect(Array.from(folded.expansions ?? [])).toEqual([0, 2, 0, 1, 10, 12, 9, 10]);
		// Offsets after the expansions still map to the original characters.
		expect(find(text, "trip")).toBe("TRIP");
		expect(find(text, "İzmir")).toBe("İzmir");
		expect(find(text, "i̇zmir")).toBe("İzmir");
		// A match on the first half of the expansion covers the whole original letter.
		expect(find("xİy", "xi")).toBe("xİ");
	});

	it("folds full-width letters as toLowerCase does: Ａ matches ａ, not a", () => {
		expect(find("ＡＢＣ全角", "ａｂｃ")).toBe("ＡＢＣ");
		expect(find("ＡＢＣ全角", "abc")).toBeUndefined();
	});

	it("leaves CJK, kana, hangul and emoji unchanged", () => {
		for (const text of ["发布负责人是谁", "リリースは何曜日", "고마워요", "😀👍🏽👨‍👩‍👧‍👦", "𠜎𠜱𝄞"]) expect(foldText(text)).toEqual({ folded: text });
		expect(find("金曜日です 🗓️✅👍🏽 — OK", "✅👍🏽")).toBe("✅👍🏽");
	});

	it("treats final sigma as sigma", () => {
		expect(find("ΟΔΟΣ", "οδος")).toBe("ΟΔΟΣ");
		expect(find("οδος", "ΟΔΟΣ")).toBe("οδος");
	});

	it("relies on no lowercase mapping shrinking and only U+0130 growing (checked over every code point)", () => {
		const changed: number[] = [];
		for (let cp = 0; cp <= 0x10ffff; cp++) {
			if (cp >= 0xd800 && cp <= 0xdfff) continue;
			const s = String.fromCodePoint(cp);
			if (s.toLowerCase().length !== s.length) changed.push(cp);
		}
		expect(changed).toEqual([0x130]);
	});

	it("relies on every text of code points below U+0300 being NFC already (each one, and each pair)", () => {
		// What lets \`foldText\` skip \`normalize\` for such a text (its \`MAY_COMPOSE\` range).
		const changed: string[] = [];
		for (let a = 0; a < 0x300; a++)
			for (let b = -1; b < 0x300; b++) {
				const text = String.fromCharCode(a) + (b < 0 ? "" : String.fromCharCode(b));
				if (text.normalize("NFC") !== text) changed.push(text);
			}
		expect(changed).toEqual([]);
		// The first code point above: a mark that composes (è typed as e + U+0300 matches è).
		expect(find("Tr\u00e8s bien", "tre\u0300s")).toBe("Tr\u00e8s");
		expect(find("Tre\u0300s bien", "tr\u00e8s")).toBe("Tre\u0300s");
	});

	it("keeps astral letters whole when they fold (Deseret)", () => {
		expect(find("𐐀𐐁 word", "𐐨𐐩")).toBe("𐐀𐐁");
	});
});

describe("canonical equivalence (NFC)", () => {
	const composed = "caf\u00e9"; // é as one code point
	const decomposed = "cafe\u0301"; // e + combining acute

	it("matches é typed as one code point and as e + U+0301, both ways, showing the text as written", () => {
		expect(find(`Le ${decomposed} est ouvert`, composed)).toBe(decomposed);
		expect(find(`Le ${composed} est ouvert`, decomposed)).toBe(composed);
		expect(find(`LE ${decomposed.toUpperCase()} EST`, "café")).toBe(decomposed.toUpperCase());
		// Not a prefix of the letter: "cafe" (no accent) does not match the decomposed é.
		expect(find(`Le ${decomposed} est`, "cafe ")).toBeUndefined();
	});

	it("maps every offset after a composed cluster back to the original", () => {
		const text = `${decomposed} ${"x".repeat(5)} ${decomposed}s and İstanbul NOW`;
		const folded = foldText(text);
		expect(folded.folded).toBe(`café ${"x".repeat(5)} cafés and i̇stanbul now`);
		expect(find(text, "now")).toBe("NOW");
		expect(find(text, "cafés")).toBe(`${decomposed}s`);
		expect(find(text, "i̇stanbul")).toBe("İstanbul");
		expect(find(text, "é x")).toBe("\u0301 x".replace(/^/, "e"));
	});

	it("matches Hangul syllables and their conjoining jamo, and the Ångström and Ohm signs by their letters", () => {
		expect(find("\u1100\u1161\u11a8 word", "\uac01")).toBe("\u1100\u1161\u11a8");
		expect(find("\u212b and \u2126", "å")).toBe("\u212b");
		expect(find("\u212b and \u2126", "ω")).toBe("\u2126");
	});

	it("leaves texts that NFC does not change on the plain path (no expansions)", () => {
		for (const text of ["plain ascii", composed, "Grüße", "发布负责人", "👍🏽"]) expect(foldText(text).expansions).toBeUndefined();
	});
});

describe("snippets", () => {
	it("cuts about 80 characters each side on grapheme boundaries and says where the match is", () => {
		const left = "👨‍👩‍👧‍👦".repeat(100);
		const text = `${left}NEEDLE${"é".repeat(200)}`;
		const at = text.indexOf("NEEDLE");
		const s = snippetAround(text, at, at + 6);
		expect(s.text.slice(s.match.start, s.match.start + s.match.length)).toBe("NEEDLE");
		expect(s.text.startsWith("…👨‍👩‍👧‍👦")).toBe(true);
		expect(s.text.endsWith("é…")).toBe(true);
		const before = s.text.slice(1, s.match.start);
		expect(before).toBe("👨‍👩‍👧‍👦".repeat(80));
		expect(s.text.slice(s.match.start + 6, -1)).toBe("é".repeat(80));
	});

	it("adds no ellipsis when the text is short", () => {
		expect(snippetAround("a short text", 2, 7)).toEqual({ text: "a short text", match: { start: 2, length: 5 } });
	});
});

describe("sliceUtf16", () => {
	const text = "ab😀cd";
	it("ends one unit early rather than between the halves of a pair", () => {
		expect(sliceUtf16(text, 0, 3)).toEqual({ text: "ab", start: 0, end: 2 });
	});
	it("starts one unit early when the start is a low surrogate", () => {
		expect(sliceUtf16(text, 3, 10)).toEqual({ text: "😀cd", start: 2, end: 6 });
	});
	it("never returns an empty slice while text remains (limit 1 on a pair)", () => {
		expect(sliceUtf16(text, 2, 1)).toEqual({ text: "😀", start: 2, end: 4 });
	});
	it("slices chained by their end give back the whole text", () => {
		const long = "x😀y👍🏽z👨‍👩‍👧‍👦".repeat(5);
		for (const limit of [1, 2, 3, 5, 7]) {
			let out = "";
			for (let offset = 0; offset < long.length; ) {
				const s = sliceUtf16(long, offset, limit);
				expect(isWellFormed(s.text)).toBe(true);
				out += s.text;
				offset = s.end;
			}
			expect(out).toBe(long);
		}
	});
});

describe("offset map on long texts", () => {
	it("maps back correctly across blocks and many expansions, surrogates included", () => {
		const unit = "İx😀ab ÄÖ İİ 𐐀 ";
		const text = unit.repeat(200);
		const folded = foldText(text);
		expect(folded.folded).toBe(text.toLowerCase().replace(/ς/g, "σ"));
		// Every occurrence of every piece maps back to the same original piece.
		for (const [query, original] of [
			["i̇x😀", "İx😀"],
			["äö i̇i̇ 𐐨", "ÄÖ İİ 𐐀"],
			["ab", "ab"],
		] as const) {
			let from = 0;
			let count = 0;
			for (let at = folded.folded.indexOf(query); at >= 0; at = folded.folded.indexOf(query, at + 1)) {
				const r = originalRange(text, folded, at, query.length);
				expect(text.slice(r.start, r.end)).toBe(original);
				expect(r.start).toBeGreaterThanOrEqual(from);
				from = r.end;
				count++;
			}
			expect(count).toBe(200);
		}
	});
});
