/**
 * A document's original text in its projection reads back as the archive holds it: UTF-8, and a
 * lone surrogate (a cut emoji: legal in a JSON string, not in UTF-8) in three bytes of its own, so
 * a shown hit's snippet is the archive's and a search for U+FFFD is not answered by it; copy keys
 * still hash the text's UTF-8.
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { readOriginal, utf8OfOriginal, writeOriginal } from "../../src/services/history/projections/text/sessionTextFormat.ts";

const PIECES = ["plain", " ", "\ud83d", "\ude00", "😀", "\ufffd", "\ud7ff", "\ue000", "é", "的", "\udbff\udfff", "\ud800\ud800", "\udc00\ud800"];

describe("a document's original text", () => {
	it("reads back as written, lone surrogates and U+FFFD each as they were, in as many bytes as UTF-8 takes", () => {
		const rng = createRng(7);
		const into = Buffer.alloc(4096, 0x61);
		for (let i = 0; i < 3000; i++) {
			let text = "";
			for (let k = rng.int(8); k > 0; k--) text += PIECES[rng.int(PIECES.length)];
			const at = rng.int(64);
			const length = writeOriginal(into, text, at);
			expect(length).toBe(Buffer.byteLength(text));
			expect(readOriginal(into.subarray(at, at + length))).toBe(text);
			// What copy keys hash: the text's UTF-8, lone surrogates as U+FFFD, as before originals kept them.
			expect(utf8OfOriginal(into.subarray(at, at + length)).equals(Buffer.from(text, "utf8"))).toBe(true);
			// Well-formed text is plain UTF-8 (what encoding and decoding it gives back whole).
			if (Buffer.from(text, "utf8").toString("utf8") === text) expect(into.subarray(at, at + length).equals(Buffer.from(text, "utf8"))).toBe(true);
		}
	});
});
