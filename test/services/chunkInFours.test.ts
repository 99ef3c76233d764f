import { describe, expect, it } from "vitest";
import { chunkInFours } from "../../src/services/history/ingest/chunkInFours.ts";
import { run } from "../helpers/entries.ts";

describe("chunkInFours", () => {
	it("cuts full chunks of four from the start and never emits a short tail", async () => {
		const [chunks] = await run([["a", "b", "c", "d", "e", "f", "g", "h", "i"]], chunkInFours<string>());
		expect(chunks).toEqual([
			["a", "b", "c", "d"],
			["e", "f", "g", "h"],
		]);
	});

	it("plans nothing for fewer than four", async () => {
		expect(await run([["a", "b", "c"]], chunkInFours<string>())).toEqual([[]]);
	});
});
