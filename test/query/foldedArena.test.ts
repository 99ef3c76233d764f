import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { FoldedArena } from "../../src/services/history/query/foldedArena.ts";

describe("FoldedArena", () => {
	it("finds exactly the documents that hold a needle, across many buffers, after removals", () => {
		const rng = createRng(3);
		const arena = new FoldedArena();
		const texts: (string | undefined)[] = [];
		const words = ["test", "tes", "st", "\u0000", "é", "日本", "😀", "x", "ab"];
		for (let i = 0; i < 6_000; i++) {
			const parts: string[] = [];
			for (let w = rng.int(40); w > 0; w--) parts.push(rng.pick(words));
			const text = parts.join(rng.chance(0.5) ? " " : "");
			texts.push(text);
			arena.add(i, text);
		}
		for (let i = 0; i < texts.length; i += 7) {
			arena.remove(i);
			texts[i] = undefined;
		}
		const live = (i: number) => texts[i] !== undefined;
		for (const needle of ["test", "st", "\u0000", "é", "日本", "😀", "x x", "abab", "zz"]) {
			const bytes = Buffer.from(needle, "utf8");
			const want = texts.flatMap((t, i) => (t !== undefined && t.includes(needle) ? [i] : []));
			expect(arena.scan(bytes, live), needle).toEqual(want);
			const all = Int32Array.from(texts.map((_, i) => i));
			expect(arena.verify(all, bytes, true), needle).toEqual(want);
			expect(arena.verify(all, bytes, false), needle).toEqual(want);
		}
	});
});
