/**
 * The bodies a resident process keeps between searches (`KeptBodies`): used only for the revision
 * they were read for, held within their budget, let go once replaced revisions are most of what is
 * held, and searched in WebAssembly like the buffers a scan reads into.
 */
import { describe, expect, it } from "vitest";
import { indexOfBytes } from "../../src/services/history/model/byteSearch.ts";
import { KeptBodies } from "../../src/services/history/projections/text/keptBodies.ts";
import { finishSessionText, projectSessionText } from "../../src/services/history/projections/text/projectSessionText.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { fixtureIndex, fixtureState } from "../query/helpers.ts";

/** Each fixture session's projection at two revisions: its head (header, table, ids) and its body, as a scan reads them. */
async function projections(): Promise<{ head: (revision: string) => SessionText; body: Buffer }[]> {
	const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
	const archives = Object.values((await fixtureState(keys)).sessions);
	return archives.map((archive) => {
		const id = archive.session.sessionId;
		const head = (revision: string) => {
			const whole = SessionText.parse(finishSessionText(projectSessionText(archive), revision), id, "whole");
			return SessionText.parse(Buffer.from(whole.bytes.subarray(0, whole.headBytes())), id, "head");
		};
		const whole = SessionText.parse(finishSessionText(projectSessionText(archive), "r1"), id, "whole");
		return { head, body: Buffer.from(whole.bytes.subarray(whole.headBytes(), whole.scanBytes())) };
	});
}

describe("KeptBodies", () => {
	it("gives a kept body back only for the revision it was read for, the same text each time for the same head", async () => {
		const sessions = await projections();
		expect(sessions.length).toBeGreaterThan(3);
		const kept = new KeptBodies(64 << 20, 1 << 16);
		for (const { head, body } of sessions) {
			const r1 = head("r1");
			expect(kept.text(r1)).toBeUndefined();
			const text = kept.keep(r1, body) as SessionText;
			expect(text.bodySlice(text.metaAt, text.originalAt)).toEqual(body);
			// The copy, not the bytes read (which the next read overwrites).
			body.fill(0);
			expect(text.bodySlice(text.metaAt, text.originalAt).equals(body)).toBe(false);
			expect(kept.text(r1)).toBe(text);
			// Another head object of the same revision: the kept body, a text made once for it.
			const again = head("r1");
			const forAgain = kept.text(again);
			expect(forAgain).toBeDefined();
			expect(kept.text(again)).toBe(forAgain);
			// Another revision: nothing (its file is read, and kept in its place).
			expect(kept.text(head("r2"))).toBeUndefined();
		}
	});

	it("keeps nothing beyond its budget, and lets go of everything once replaced revisions are most of what it holds", async () => {
		const sessions = await projections();
		const slab = 1 << 16;
		const small = new KeptBodies(slab, slab);
		let keptCount = 0;
		for (const { head, body } of sessions) if (small.keep(head("r1"), Buffer.from(body))) keptCount++;
		expect(small.bytes).toBeLessThanOrEqual(slab);
		expect(keptCount).toBeGreaterThan(0);
		expect(keptCount).toBeLessThan(sessions.length);

		const kept = new KeptBodies(64 << 20, slab);
		for (const { head, body } of sessions) kept.keep(head("r1"), Buffer.from(body));
		const held = kept.bytes;
		// The same sessions again at a new revision, over and over: held bytes stay bounded (let go, kept anew).
		for (let round = 2; round < 40; round++) for (const { head, body } of sessions) kept.keep(head(`r${round}`), Buffer.from(body));
		expect(kept.bytes).toBeLessThanOrEqual(3 * held + 2 * slab);
		// (The last one kept is there: one kept earlier may have been let go since, with everything.)
		const last = sessions.at(-1) as (typeof sessions)[number];
		expect(kept.text(last.head("r39"))).toBeDefined();
		expect(kept.text(last.head("r1"))).toBeUndefined();
		kept.clear();
		expect(kept.bytes).toBe(0);
		expect(kept.text(last.head("r39"))).toBeUndefined();
	});

	it("holds bodies where the byte search runs in WebAssembly", async () => {
		const [first] = await projections();
		if (!first) throw new Error("no fixture session");
		const kept = new KeptBodies(64 << 20);
		const text = kept.keep(first.head("r1"), first.body) as SessionText;
		const body = text.bodySlice(text.metaAt, text.originalAt);
		const needle = Buffer.from(body.subarray(body.length - 6, body.length - 2));
		expect(indexOfBytes(body, needle, 0)).toBe(body.indexOf(needle));
		// In a shared 16 MB buffer of a module's memory, not a buffer of its own.
		expect(body.buffer.byteLength).toBeGreaterThanOrEqual(16 << 20);
	});
});
