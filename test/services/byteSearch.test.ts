/**
 * The byte search in WebAssembly (`byteSearch.ts`) finds what `Buffer.indexOf` finds, wherever the
 * haystack sits in a searchable buffer and wherever the search starts; and the module the code
 * carries is the `.wat` beside it, compiled.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { byteSearchModuleSource, compileByteSearch, moduleFile } from "../../scripts/byte-search-wasm.mjs";
import { indexOfBytes, pairToTest, searchableBuffer } from "../../src/services/history/model/byteSearch.ts";
import { BYTE_SEARCH_WASM } from "../../src/services/history/model/byteSearchModule.ts";
import { prng } from "../durability/fuzz/mutations.ts";

/** Bytes from a small alphabet (so needles nearly match everywhere): letters, a CJK character's bytes, the separator 0xFF. */
const ALPHABET = [0x61, 0x62, 0x63, 0x20, 0xe9, 0x85, 0x8d, 0xff];

function fill(into: Buffer, next: () => number): void {
	for (let i = 0; i < into.length; i++) into[i] = ALPHABET[Math.floor(next() * ALPHABET.length)] as number;
}

describe("byte search", () => {
	it("carries the module its .wat compiles to", async () => {
		const bytes = await compileByteSearch();
		expect(BYTE_SEARCH_WASM).toBe(bytes.toString("base64"));
		// The file itself is what the script writes (so Biome's formatting and the script agree).
		expect(readFileSync(moduleFile, "utf8")).toBe(byteSearchModuleSource(bytes));
	});

	it("finds what Buffer.indexOf finds, in WebAssembly", () => {
		const next = prng(20261203);
		const region = searchableBuffer(70_000);
		// This machine has WebAssembly SIMD: the search below must be the module's, not the fallback.
		expect(region).toBeDefined();
		if (!region) return;
		let compared = 0;
		let found = 0;
		for (let round = 0; round < 400; round++) {
			// A haystack anywhere in the region, of any length (the 16-byte blocks and the tail both run).
			const length = round % 50 === 0 ? 60_000 : Math.floor(next() * 300);
			const start = Math.floor(next() * (region.length - length));
			const hay = region.subarray(start, start + length);
			fill(hay, next);
			for (let n = 0; n < 8; n++) {
				const k = 2 + Math.floor(next() * (n < 6 ? 6 : 40));
				let needle: Uint8Array;
				if (n % 2 === 0 && length > k) {
					const at = Math.floor(next() * (length - k));
					needle = Uint8Array.from(hay.subarray(at, at + k));
				} else {
					needle = Buffer.alloc(k);
					fill(needle as Buffer, next);
				}
				for (const from of [0, 1, Math.floor(next() * (length + 1)), Math.max(0, length - k), Math.max(0, length - k + 1), length, length + 3]) {
					const expected = hay.indexOf(needle, from);
					expect(indexOfBytes(hay, needle, from), `length ${length}, k ${k}, from ${from}`).toBe(expected);
					compared++;
					if (expected >= 0) found++;
				}
				// The module searched (from 0 at least): the needle is in its memory, before the region.
				if (length >= k) expect(Buffer.from(region.buffer, 0, k).equals(needle)).toBe(true);
			}
		}
		expect(compared).toBeGreaterThan(20_000);
		expect(found).toBeGreaterThan(compared / 10);
	});

	it("tests a needle's two rarest bytes first: two offsets inside it, in order", () => {
		expect(pairToTest(Buffer.from("ab"))).toEqual([0, 1]);
		// Not the common first and last letters of "the user", but its rarest: "h" and "u".
		expect(pairToTest(Buffer.from("the user"))).toEqual([1, 4]);
		// Of "map_quota27-zq516", its "q" and "z": rarer than its other letters, its digits and its punctuation.
		expect(pairToTest(Buffer.from("map_quota27-zq516"))).toEqual([4, 12]);
		const next = prng(7);
		for (let n = 0; n < 500; n++) {
			const needle = Buffer.alloc(2 + Math.floor(next() * 30));
			fill(needle, next);
			const [a, b] = pairToTest(needle);
			expect(a).toBeGreaterThanOrEqual(0);
			expect(b).toBeGreaterThan(a);
			expect(b).toBeLessThan(needle.length);
		}
	});

	it("leaves other buffers and one-byte needles to Buffer.indexOf", () => {
		const plain = Buffer.from("a plain buffer, not searchable");
		expect(indexOfBytes(plain, Buffer.from("buffer"), 0)).toBe(plain.indexOf("buffer"));
		expect(indexOfBytes(plain, Buffer.from("buffer"), 9)).toBe(-1);
		const region = searchableBuffer(64) as Buffer;
		region.write("xyzzy and xyzzy", 0, "latin1");
		expect(indexOfBytes(region, Buffer.from("y"), 3)).toBe(region.indexOf("y", 3));
		expect(indexOfBytes(region, Buffer.from("xyzzy"), 1)).toBe(10);
	});
});
