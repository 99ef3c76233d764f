/**
 * A projection's file bytes are made without copying its sections: the first `finishSessionText`
 * writes the header line into room left before them. A second one on the same body (a live
 * update's overlay, then its write) must not touch the first's bytes, which are still searched.
 */
import { describe, expect, it } from "vitest";
import type { QaNode } from "../../src/services/history/model/types.ts";
import { evolveSession, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import { type DocBytesCache, finishSessionText, projectSessionText } from "../../src/services/history/projections/text/projectSessionText.ts";
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

describe("projectSessionText reusing an earlier body", () => {
	it("makes the bytes a projection from nothing makes, copying only the documents that did not change", async () => {
		const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
		const archives = Object.values((await fixtureState(keys)).sessions).filter((a) => Object.keys(a.nodes).length >= 2);
		expect(archives.length).toBeGreaterThan(2);
		let reusedSomewhere = 0;
		for (const archive of archives) {
			const reuse: DocBytesCache = new WeakMap();
			const first = projectSessionText(archive, { reuse });
			expect(finishSessionText(first, "r1")).toEqual(finishSessionText(projectSessionText(archive), "r1"));

			// As the live tail changes a session: a Q&A answered anew (new text, not ASCII), a Q&A
			// added, a summary made ready; everything else is the same objects.
			const [changed, kept] = Object.values(archive.nodes) as [QaNode, QaNode];
			const sessionId = archive.session.sessionId;
			const rewritten: QaNode = { ...changed, parts: changed.parts.map((p) => ({ ...p, text: `${p.text} — İstanbul ΣΑΣ ｆｕｌｌ` })) };
			const added: QaNode = {
				...kept,
				id: "qa_reuseTest000000000001",
				parts: [{ kind: "input", entryId: "e-new", text: "A heron by the pond?", at: kept.startedAt }],
			};
			const summary = Object.values(archive.summaries)[0];
			const after = evolveSession(archive, [
				{ type: "QaObserved", node: rewritten },
				{ type: "QaObserved", node: added },
				...(summary
					? [{ type: "SummaryReady" as const, sessionId, id: summary.id, text: "Ｒeady: the pool was sized.", model: "faux/m", at: summary.endedAt }]
					: []),
			]) as SessionArchive;
			const second = projectSessionText(after, { reuse });
			expect(finishSessionText(second, "r2")).toEqual(finishSessionText(projectSessionText(after), "r2"));

			// The unchanged documents now point into the second body: the next one copies from it.
			for (const doc of [...Object.values(after.nodes), ...Object.values(after.summaries)]) {
				expect(reuse.get(doc)?.folded.buffer).toBe(second.file.buffer);
				if (doc === archive.nodes[doc.id] || doc === archive.summaries[doc.id]) reusedSomewhere++;
			}
			// And a third revision from the second's bytes is still exact.
			const third = evolveSession(after, [
				{
					type: "QaObserved",
					node: { ...added, parts: [...added.parts, { kind: "reply", entryId: "e-new-reply", text: "By the pond.", at: added.startedAt, stopReason: "stop" }] },
				},
			]) as SessionArchive;
			expect(finishSessionText(projectSessionText(third, { reuse }), "r3")).toEqual(finishSessionText(projectSessionText(third), "r3"));
		}
		expect(reusedSomewhere).toBeGreaterThan(archives.length);
	});
});
