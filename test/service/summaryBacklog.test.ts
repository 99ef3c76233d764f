import { describe, expect, it } from "vitest";
import { searchableText } from "../../src/services/history/query/searchIndex.ts";
import { ingestedFixtureWorkspace, NATIVE_KEYS } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("each");

describe("the summary backlog", () => {
	it("counts each session's due summaries and estimates their input from the projection, agreeing with the archives, in a new process that read none", async () => {
		const { open } = await ingestedFixtureWorkspace(NATIVE_KEYS, cleanups);
		const expected = new Map<string, { due: number; inputChars: number }>();
		const reader = open();
		await reader.load();
		for (const [id, archive] of Object.entries(reader.archiveState().sessions)) {
			const due = Object.values(archive.summaries).filter((s) => s.status === "pending" || s.stale === true).length;
			if (due === 0) continue;
			const qa = Object.values(archive.nodes);
			const bytes = qa.reduce((n, q) => n + Buffer.byteLength(searchableText(q)), 0);
			expected.set(id, { due, inputChars: Math.round((due * 4 * bytes) / qa.length) });
		}
		expect(expected.size).toBeGreaterThan(0);
		const fresh = open();
		expect(new Map(await fresh.summaryBacklog())).toEqual(expected);
		expect(fresh.sessionsInMemory).toBe(0);
	});
});
