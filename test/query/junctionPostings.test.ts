/**
 * `JunctionPostings`: a junction's lists hold every document that has it, however the junctions
 * were batched (a document's junctions may be listed in two batches), and needles split into the
 * junctions the index can use.
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { JunctionPostings, junctionsOf } from "../../src/services/history/query/junctionPostings.ts";
import type { PostingLists } from "../../src/services/history/query/postingLists.ts";

const documentsOf = (lists: PostingLists, ids: readonly number[]) => [...new Set(ids.flatMap((id) => Array.from(lists.documents(id))))].sort((a, b) => a - b);

describe("JunctionPostings", () => {
	it("lists every document under its junctions, in batches of any size", () => {
		const rng = createRng(3);
		const words = ["the", "user", "users", "on", "do", "a", "bathe", "x_1", "config"];
		const seps = [" ", "  ", "\n", " ", ", "];
		const texts = Array.from({ length: 400 }, () => Array.from({ length: rng.range(1, 30) }, () => (words[rng.int(words.length)] as string) + (seps[rng.int(seps.length)] as string)).join(""));
		const small = new JunctionPostings(7);
		const large = new JunctionPostings();
		texts.forEach((t, doc) => {
			small.addDocument(t, doc);
			large.addDocument(t, doc);
		});
		for (const needle of ["the user", "he use", "on do", "a the", "x_1 config", "bathe users", "do\nthe", "on  on"]) {
			for (const j of junctionsOf(needle)) {
				const inSmall = small.listsOf(j);
				const inLarge = large.listsOf(j);
				if (inSmall === undefined || inLarge === undefined) {
					expect(inSmall).toEqual(inLarge);
					continue;
				}
				const docs = documentsOf(large.lists, inLarge);
				expect(documentsOf(small.lists, inSmall)).toEqual(docs);
				// Every document with the needle is among them.
				texts.forEach((t, doc) => {
					if (t.includes(needle)) expect(docs).toContain(doc);
				});
			}
		}
	});

	it("splits a needle into junctions: whitespace between words, edge words bounded or open", () => {
		expect(junctionsOf("the user")).toEqual([{ left: "the", leftBounded: false, separator: " ", right: "user", rightBounded: false }]);
		expect(junctionsOf("is its how").map((j) => [j.left, j.leftBounded, j.right, j.rightBounded])).toEqual([
			["is", false, "its", true],
			["its", true, "how", false],
		]);
		expect(junctionsOf("user, a")).toEqual([]);
		expect(junctionsOf(" the    user ")).toEqual([]);
		expect(junctionsOf("the")).toEqual([]);
	});
});
