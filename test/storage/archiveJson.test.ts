/**
 * A live session's archive is written from its records' cached JSON (`archiveJsonBytes`): the
 * bytes must be exactly what encoding the whole archive gives, revision after revision, and the
 * records that did not change must not be encoded again.
 */
import { describe, expect, it } from "vitest";
import type { QaNode } from "../../src/services/history/model/types.ts";
import { evolveSession, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import { type ArchiveJsonCache, archiveJsonBytes } from "../../src/storage/history-files/archiveJson.ts";
import { jsonBytes } from "../../src/storage/history-files/writeJsonAtomic.ts";
import { fixtureIndex, fixtureState } from "../query/helpers.ts";

describe("archiveJsonBytes", () => {
	it("writes the bytes of the whole archive encoded at once, encoding only new records", async () => {
		const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
		const archives = Object.values((await fixtureState(keys)).sessions);
		expect(archives.length).toBeGreaterThan(3);
		for (const archive of archives) {
			expect(archiveJsonBytes(archive)).toEqual(jsonBytes(archive));
			const cache: ArchiveJsonCache = new WeakMap();
			expect(archiveJsonBytes(archive, cache)).toEqual(jsonBytes(archive));

			// The next revision, as the live tail makes one: a Q&A answered anew (text that is not
			// ASCII, quotes, a newline), one added, a summary made ready; the rest the same objects.
			const nodes = Object.values(archive.nodes);
			const changed = nodes[0];
			const sessionId = archive.session.sessionId;
			const events = [
				...(changed
					? [{ type: "QaObserved" as const, node: { ...changed, parts: changed.parts.map((p) => ({ ...p, text: `${p.text}\n"İstanbul" ΣΑΣ 🐘` })) } }]
					: []),
				...(changed
					? [
							{
								type: "QaObserved" as const,
								node: {
									...changed,
									id: "qa_archiveJsonTest00001",
									parts: [{ kind: "input", entryId: "e-json", text: "Where is the heron?", at: changed.startedAt }],
								} as QaNode,
							},
						]
					: []),
				...Object.values(archive.summaries)
					.slice(0, 1)
					.map((s) => ({ type: "SummaryReady" as const, sessionId, id: s.id, text: "Ready: \\u2028 and \\\\ kept.", model: "faux/m", at: s.endedAt })),
			];
			const next = evolveSession(archive, events) as SessionArchive;
			expect(archiveJsonBytes(next, cache)).toEqual(jsonBytes(next));
			const unchanged = nodes.slice(1).filter((n) => next.nodes[n.id] === n);
			for (const node of unchanged) {
				const bytes = cache.get(node);
				expect(bytes).toBeDefined();
				expect(Buffer.from(bytes as Uint8Array).toString("utf8")).toBe(JSON.stringify(node));
			}
			// A cached record is taken as it is, not encoded again: the same bytes object serves both revisions.
			const kept = unchanged[0];
			if (kept) {
				const before = cache.get(kept);
				archiveJsonBytes(next, cache);
				expect(cache.get(kept)).toBe(before);
			}
		}
	});
});
