import { pipe } from "rxjs";
import { describe, expect, it } from "vitest";
import { buildEntryTree, isNormalIsoTime } from "../../src/services/history/ingest/buildEntryTree.ts";
import { normalizeEntries } from "../../src/services/history/ingest/normalizeEntries.ts";
import { parseLines } from "../../src/services/history/ingest/parseLines.ts";
import { splitLines } from "../../src/services/history/ingest/splitLines.ts";
import { header, jsonl, reply, run, user } from "../helpers/entries.ts";

const tree = async (lines: unknown[]) => {
	const out = await run([jsonl(lines)], pipe(splitLines(), parseLines(), normalizeEntries(), buildEntryTree()));
	return out[out.length - 1]!;
};

describe("buildEntryTree", () => {
	it("links messages through non-message entries (labels, names, model changes)", async () => {
		const t = await tree([
			header(),
			user("u1", null, "q"),
			{ type: "label", id: "l1", parentId: "u1", timestamp: "2026-01-01T00:00:00Z", targetId: "u1", label: "important" },
			reply("a1", "l1", "a"),
		]);
		expect(t.messages.map((m) => [m.entryId, m.parent])).toEqual([
			["u1", -1],
			["a1", 0],
		]);
		expect(t.labels.get("u1")).toBe("important");
	});

	it("falls back to the previous entry when a parentId points at nothing", async () => {
		const t = await tree([header(), user("u1", null, "q"), reply("a1", "gone", "a")]);
		expect(t.messages[1]?.parent).toBe(0);
	});

	it("cannot hang on a parentId cycle: a parent must come before its child", async () => {
		const t = await tree([header(), user("u1", "a1", "q"), reply("a1", "u1", "a"), user("u2", "u2", "self")]);
		expect(t.messages.map((m) => m.parent)).toEqual([-1, 0, 1]);
	});

	it("lets a repeated id refer to its latest occurrence", async () => {
		const t = await tree([header(), user("x", null, "first"), reply("x", "x", "second"), user("u3", "x", "third")]);
		expect(t.messages.map((m) => m.parent)).toEqual([-1, 0, 1]);
	});

	it("keeps the latest session name and counts rejected lines", async () => {
		const t = await tree([
			header(),
			{ type: "session_info", id: "n1", parentId: null, timestamp: "2026-01-01T00:00:00Z", name: "first" },
			"garbage",
			{ type: "session_info", id: "n2", parentId: "n1", timestamp: "2026-01-01T00:00:00Z", name: " Release plan " },
		]);
		expect(t.name).toBe("Release plan");
		expect(t.rejectedCount).toBe(1);
		expect(t.rejections[0]).toEqual({ line: 3, reason: expect.stringMatching(/^not valid JSON/), bytes: 7 });
	});
});

describe("isNormalIsoTime", () => {
	it("accepts exactly the strings toISOString gives back unchanged", () => {
		const samples = [
			"2026-03-01T09:00:00.001Z",
			"2024-02-29T10:00:00.000Z",
			"2026-02-29T00:00:00.000Z",
			"2026-02-30T00:00:00.000Z",
			"2100-02-29T00:00:00.000Z",
			"2000-02-29T23:59:59.999Z",
			"2026-04-31T00:00:00.000Z",
			"2026-12-31T23:59:59.999Z",
			"2026-01-01T24:00:00.000Z",
			"2026-01-01T23:60:00.000Z",
			"2026-01-01T23:59:60.000Z",
			"2026-13-01T00:00:00.000Z",
			"2026-00-10T00:00:00.000Z",
			"2026-01-00T00:00:00.000Z",
			"2026-01-01T00:00:00Z",
			"2026-01-01 00:00:00.000Z",
			"2026-01-01T00:00:00.000+00:00",
			"２026-01-01T00:00:00.000Z",
			"0000-01-01T00:00:00.000Z",
		];
		for (const s of samples) {
			const t = Date.parse(s);
			const roundTrip = !Number.isNaN(t) && new Date(t).toISOString() === s;
			expect(isNormalIsoTime(s), s).toBe(roundTrip);
		}
	});
});
