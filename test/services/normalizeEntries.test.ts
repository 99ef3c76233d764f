import { describe, expect, it } from "vitest";
import { normalizeEntries } from "../../src/services/history/ingest/normalizeEntries.ts";
import { parseLines } from "../../src/services/history/ingest/parseLines.ts";
import { splitLines } from "../../src/services/history/ingest/splitLines.ts";
import { pipe } from "rxjs";
import { jsonl, run } from "../helpers/entries.ts";

const normalize = (lines: unknown[]) => run([jsonl(lines)], pipe(splitLines(), parseLines(), normalizeEntries())).then((b) => b.flat());

describe("normalizeEntries", () => {
	const v1 = [
		{ type: "session", id: "old", timestamp: "2025-01-01T00:00:00Z", cwd: "/w" },
		{ type: "message", timestamp: "2025-01-01T00:00:01Z", message: { role: "user", content: "q" } },
		{ type: "message", timestamp: "2025-01-01T00:00:02Z", message: { role: "assistant", content: [{ type: "text", text: "a" }], stopReason: "stop" } },
	];

	it("gives version-1 entries ids from their line numbers, chained by file order", async () => {
		const out = await normalize(v1);
		const entries = out.flatMap((p) => (p.kind === "entry" ? [p.entry] : []));
		expect(entries.map((e) => [e.id, e.parentId])).toEqual([
			["v1-2", null],
			["v1-3", "v1-2"],
		]);
	});

	it("gives the same ids on every read of a legacy file", async () => {
		expect(await normalize(v1)).toEqual(await normalize(v1));
	});

	it("rejects a second header and a current-version entry without an id", async () => {
		const out = await normalize([
			{ type: "session", version: 3, id: "s" },
			{ type: "session", version: 3, id: "t" },
			{ type: "label", parentId: null, targetId: "x", label: "y" },
		]);
		expect(out.filter((p) => p.kind === "rejected").map((p) => p.kind === "rejected" && p.reason)).toEqual([
			"a second session header",
			'entry of type "label" without an id',
		]);
	});
});
