import { describe, expect, it } from "vitest";
import { fullChunks } from "../../src/services/history/model/hierarchy.ts";

describe("the rule of four (hierarchy)", () => {
	it("cuts full chunks of four from the start and never a short tail", () => {
		expect(fullChunks(["a", "b", "c", "d", "e", "f", "g", "h", "i"])).toEqual([
			["a", "b", "c", "d"],
			["e", "f", "g", "h"],
		]);
	});

	it("plans nothing for fewer than four", () => {
		expect(fullChunks(["a", "b", "c"])).toEqual([]);
	});
});
