/**
 * A projection's file bytes are made without copying its sections: the first `finishSessionText`
 * writes the header line into room left before them. A second one on the same body (a live
 * update's overlay, then its write) must not touch the first's bytes, which are still searched.
 */
import { describe, expect, it } from "vitest";
import { finishSessionText, projectSessionText } from "../../src/services/history/projections/text/projectSessionText.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { fixtureIndex, fixtureState } from "../query/helpers.ts";

describe("finishSessionText", () => {
	it("gives every finish of a body its own header and the same sections, leaving earlier bytes as they were", async () => {
		const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
		const archives = Object.values((await fixtureState(keys)).sessions);
		expect(archives.length).toBeGreaterThan(3);
		for (const archive of archives) {
			const body = projectSessionText(archive);
			const first = finishSessionText(body, "in memory");
			const kept = Buffer.from(first);
			// A revision far longer than the room left for one: copied, not cut.
			const revisions = ["1234-5678-1733000000000", "r".repeat(500)];
			for (const revision of revisions) {
				const again = finishSessionText(body, revision);
				const parsed = SessionText.parse(again, archive.session.sessionId, "whole");
				expect(parsed.revision).toBe(revision);
				expect(again.subarray(parsed.headerBytes())).toEqual(first.subarray(SessionText.parse(first, archive.session.sessionId, "whole").headerBytes()));
				expect(again.buffer === first.buffer && again.byteOffset < first.byteOffset + first.length).toBe(false);
			}
			expect(first).toEqual(kept);
			// A body finished first with a real revision writes the same bytes as a copy would.
			const fresh = projectSessionText(archive);
			const direct = finishSessionText(fresh, revisions[0] as string);
			expect(direct.buffer).toBe(fresh.file.buffer);
			expect(direct).toEqual(finishSessionText(projectSessionText(archive), revisions[0] as string));
		}
	});
});
