/**
 * `PostingLists` across pages of list fields and block classes: what goes in comes out, by
 * `documents`, `intersect` and `mark`, for tens of thousands of lists of every length.
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { PostingLists } from "../../src/services/history/query/postingLists.ts";

describe("PostingLists", () => {
	it("keeps every list of 40k (three pages of fields), short and long, with gaps of every width", () => {
		const rng = createRng(9);
		const lists = new PostingLists();
		const expected: number[][] = [];
		for (let id = 0; id < 40_000; id++) {
			expect(lists.create()).toBe(id);
			expected.push([]);
		}
		// Documents ascend: each list gets a random subset, some lists thousands, some gaps huge.
		for (let doc = 0; doc < 3_000; doc++) {
			for (let k = rng.int(30); k > 0; k--) {
				const id = rng.chance(0.3) ? rng.int(8) : rng.int(40_000);
				const d = doc * (id === 3 ? 100_000 : 1);
				const list = expected[id] as number[];
				if (list[list.length - 1] === d) continue;
				list.push(d);
				lists.add(id, d);
			}
		}
		for (let id = 0; id < 40_000; id += rng.int(50) + 1) {
			expect(Array.from(lists.documents(id))).toEqual(expected[id]);
			expect(lists.frequency(id)).toBe((expected[id] as number[]).length);
		}
		for (const id of [0, 1, 2, 3, 39_999]) {
			const list = expected[id] as number[];
			const candidates = Int32Array.from(list.filter((_, i) => i % 3 === 0).concat([7, 10_001]).sort((a, b) => a - b));
			expect(Array.from(lists.intersect(id, Int32Array.from(new Set(candidates))))).toEqual([...new Set(candidates)].filter((d) => list.includes(d)));
			if (id !== 3) {
				const bits = new Int32Array(200);
				lists.mark(id, bits);
				const marked: number[] = [];
				for (let d = 0; d < 6_400; d++) if ((bits[d >> 5] as number) & (1 << (d & 31))) marked.push(d);
				expect(marked).toEqual(list);
			}
		}
	});
});
