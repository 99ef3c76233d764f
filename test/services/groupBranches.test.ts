import { describe, expect, it } from "vitest";
import { distinctBranches } from "../../src/services/history/ingest/groupBranches.ts";

describe("distinctBranches", () => {
	it("drops a path whose Q&A are a prefix of another path's, and empty paths", () => {
		const out = distinctBranches([
			{ leafId: "t", nodeIds: ["a", "b"] },
			{ leafId: "x", nodeIds: ["a", "b", "c"] },
			{ leafId: "y", nodeIds: ["a", "d"] },
			{ leafId: "z", nodeIds: [] },
		]);
		expect(out.map((b) => b.leafId)).toEqual(["x", "y"]);
	});

	it("keeps the first of identical paths", () => {
		const out = distinctBranches([
			{ leafId: "p", nodeIds: ["a", "b"] },
			{ leafId: "q", nodeIds: ["a", "b"] },
		]);
		expect(out.map((b) => b.leafId)).toEqual(["p"]);
	});
});
