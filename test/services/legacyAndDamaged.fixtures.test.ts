import { from, lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import { ofType } from "../helpers/entries.ts";
import { fixtureArchive, fixtureBytes, fixtureEvents, fixtureFacts, texts } from "../helpers/fixtures.ts";

describe("legacy session files", () => {
	it("reads a version-1 file (no entry ids) with the same ids every time", async () => {
		const once = await fixtureEvents("legacy-v1");
		const twice = await fixtureEvents("legacy-v1");
		expect(once).toEqual(twice);
		const nodes = ofType(once, "QaObserved").map((e) => e.node);
		expect(nodes.length).toBeGreaterThan(3);
		expect(nodes.every((n) => n.entryIds.every((id) => /^v1-\d+$/.test(id)))).toBe(true);
	});

	it("extracts from a version-1 file the same words as from the file it was derived from", async () => {
		const legacy = await fixtureArchive("legacy-v1");
		const source = await fixtureArchive("compaction");
		const words = (a: typeof legacy) => Object.values(a.nodes).map(texts).sort();
		expect(words(legacy)).toEqual(words(source));
	});

	it("reads a version-2 file, treating hook messages as custom messages, not questions", async () => {
		const once = await fixtureEvents("legacy-v2");
		expect(once).toEqual(await fixtureEvents("legacy-v2"));
		const legacy = await fixtureArchive("legacy-v2");
		const source = await fixtureArchive("tools-thinking");
		expect(Object.values(legacy.nodes).map(texts).sort()).toEqual(Object.values(source.nodes).map(texts).sort());
	});
});

describe("damaged session files", () => {
	it("records malformed lines as rejections and still extracts every good Q&A", async () => {
		const { junkLines } = fixtureFacts<{ junkLines: number }>("malformed-lines");
		const damaged = await fixtureArchive("malformed-lines");
		const source = await fixtureArchive("abort-at-leaf");
		// Of the inserted junk, two lines are blank: skipped, not rejected (a blank line says nothing).
		const raw = new TextDecoder().decode(await fixtureBytes("malformed-lines")).split("\n");
		const blank = raw.slice(0, -1).filter((l) => l.trim() === "").length;
		expect(blank).toBe(2);
		expect(damaged.rejections.count).toBe(junkLines - blank);
		expect(damaged.rejections.lines.every((r) => r.line > 0 && r.reason.length > 0)).toBe(true);
		expect(Object.values(damaged.nodes).map(texts).sort()).toEqual(Object.values(source.nodes).map(texts).sort());
	});

	it("holds a torn last line and completes it when the rest is appended (live)", async () => {
		const torn = await fixtureBytes("torn-tail");
		const whole = await fixtureBytes("error-reply");
		// The torn copy is the whole file cut short (under its own session id, same length).
		const afterHeader = (b: Uint8Array) => new TextDecoder().decode(b.subarray(b.indexOf(0x0a)));
		expect(afterHeader(whole).startsWith(afterHeader(torn))).toBe(true);
		const rest = whole.subarray(torn.length);
		const batches = await lastValueFrom(from([torn, rest]).pipe(sessionPipeline({ mode: "live" }), toArray()));
		expect(batches).toHaveLength(2);
		expect(ofType(batches[0]!, "LineRejected")).toEqual([]);
		const replayedWhole = await fixtureArchive("error-reply");
		// Live events: the latest version of each node, as a projection would keep it.
		const latest = new Map<string, string[]>();
		for (const batch of batches) for (const e of ofType(batch, "QaObserved")) latest.set(e.node.id, texts(e.node));
		expect([...latest.values()].sort()).toEqual(Object.values(replayedWhole.nodes).map(texts).sort());
		// Before the rest arrived, the held line's reply was not there yet.
		const before = ofType(batches[0]!, "QaObserved").map((e) => texts(e.node).join("|"));
		expect(before.join("\n")).not.toEqual([...latest.values()].map((t) => t.join("|")).join("\n"));
		// The appended part brought what the torn line held back.
		expect(ofType(batches[1]!, "QaObserved").length + ofType(batches[1]!, "BranchesObserved").length).toBeGreaterThan(0);
	});

	it("does not reject a torn last line when a whole file is replayed", async () => {
		const events = await fixtureEvents("torn-tail");
		expect(ofType(events, "LineRejected")).toEqual([]);
		expect(ofType(events, "QaObserved").length).toBeGreaterThan(0);
	});

	it("says nothing about an empty file (named by Pi, not yet written)", async () => {
		expect(await fixtureEvents("empty")).toEqual([]);
	});
});
