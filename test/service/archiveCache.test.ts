import { describe, expect, it } from "vitest";
import { emptySessionArchive, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import { ArchiveCache } from "../../src/services/history/service/archiveCache.ts";
import { HeldArchives } from "../../src/services/history/service/heldArchives.ts";

const archiveOf = (sessionId: string): SessionArchive => emptySessionArchive({ sessionId, version: 3, startedAt: "2026-01-01T00:00:00.000Z" });

describe("ArchiveCache", () => {
	it("answers only for the revision read, and drops the least recently used beyond its capacity", () => {
		const cache = new ArchiveCache(2);
		cache.put("a", "r1", archiveOf("a"));
		cache.put("b", "r1", archiveOf("b"));
		expect(cache.get("a", "r2")).toBeUndefined();
		expect(cache.get("a", undefined)).toBeUndefined();
		const a = cache.get("a", "r1"); // a is now the most recent
		expect(a?.view.nodes.has("a")).toBe(true);
		expect(a?.view).toBe(a?.view); // made once, when first asked for
		cache.put("c", "r1", archiveOf("c"));
		expect(cache.size).toBe(2);
		expect(cache.get("b", "r1")).toBeUndefined();
		expect(cache.get("a", "r1")).toBeDefined();
	});
});

describe("HeldArchives", () => {
	it("lets an archive held until written go when its write starts, and only that very archive", () => {
		const held = new HeldArchives();
		const a = archiveOf("a");
		held.holdUntilWritten("a", a);
		expect(held.state().sessions).toEqual({}); // not part of the state the queries and the worker see
		expect(held.size).toBe(1);
		expect(held.releaseWritten("a", archiveOf("a"))).toBe(false);
		expect(held.releaseWritten("a", a)).toBe(true);
		expect(held.has("a")).toBe(false);
	});

	it("keeps its state object while nothing changes, and makes a new one when something does", () => {
		const held = new HeldArchives();
		held.hold("a", archiveOf("a"));
		const first = held.state();
		expect(held.state()).toBe(first);
		const b = archiveOf("b");
		held.holdUntilWritten("b", b);
		expect(held.state()).toBe(first);
		held.keep("b");
		expect(held.state()).not.toBe(first);
		expect(Object.keys(held.state().sessions)).toEqual(["a", "b"]);
		expect(held.releaseWritten("b", b)).toBe(false); // held for good now
	});
});
