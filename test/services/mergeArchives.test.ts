import { describe, expect, it } from "vitest";
import { applyArchiveEvents, initialArchiveState, MAX_STORED_REJECTIONS, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { mergeArchives } from "../../src/services/history/projections/mergeArchives.ts";
import { jsonl, linearSession, replayEvents, reply, user } from "../helpers/entries.ts";
import { fixtureBytes } from "../helpers/fixtures.ts";

const SID = "0190aaaa-0000-7000-8000-000000000002";

/** A linear session of n answered questions (the last one open when `openTail`). */
const linear = (n: number, openTail = false, extra: unknown[] = []): unknown[] => [...linearSession(SID, n, { openTail }), ...extra];

async function archiveOf(lines: unknown[], events: HistoryEvent[] = [], base?: SessionArchive): Promise<SessionArchive> {
	const start = base ? { sessions: { [SID]: base } } : initialArchiveState();
	return applyArchiveEvents(start, [...(await replayEvents(jsonl(lines))), ...events]).sessions[SID] as SessionArchive;
}

const ready = (id: string, text: string, at: string): HistoryEvent => ({ type: "SummaryReady", sessionId: SID, id, text, model: "faux/faux-1", at });
const failed = (id: string, at: string): HistoryEvent => ({ type: "SummaryFailed", sessionId: SID, id, error: "rate limited", at });
const level1 = (a: SessionArchive) => Object.values(a.summaries).filter((s) => s.level === 1);

describe("mergeArchives", () => {
	it("given an earlier state of the same writer, gives the later state itself", async () => {
		const early = await archiveOf(linear(6, true));
		const s = level1(early)[0]!;
		const later = await archiveOf(
			linear(13),
			[ready(s.id, "text", "2026-02-01T00:00:00.000Z"), failed(level1(early)[0]!.id, "2026-02-02T00:00:00.000Z")],
			early,
		);
		expect(mergeArchives(early, later)).toBe(later);
	});

	it("gives the later state for every prefix of a real session growing line by line", async () => {
		const bytes = new TextDecoder().decode(await fixtureBytes("steer-followup-abort"));
		const lines = bytes.split("\n").filter((l) => l !== "");
		let previous: SessionArchive | undefined;
		const id = JSON.parse(lines[0]!).id as string;
		for (let n = 1; n <= lines.length; n++) {
			const events = await replayEvents(new TextEncoder().encode(`${lines.slice(0, n).join("\n")}\n`));
			const state = applyArchiveEvents(previous ? { sessions: { [id]: previous } } : initialArchiveState(), events);
			const next = state.sessions[id];
			if (!next) continue;
			if (previous) expect(mergeArchives(previous, next)).toBe(next);
			previous = next;
		}
		expect(previous).toBeDefined();
	});

	it("keeps the nodes and summaries of both writers", async () => {
		const base = await archiveOf(linear(8));
		const [s1, s2] = level1(base);
		const a = await archiveOf(linear(8), [ready(s1!.id, "from A", "2026-02-01T00:00:00.000Z")], base);
		const b = await archiveOf(linear(12), [ready(s2!.id, "from B", "2026-02-01T00:00:00.000Z")], base);
		const merged = mergeArchives(a, b);
		expect(Object.keys(merged.nodes).sort()).toEqual(Object.keys(b.nodes).sort());
		expect(merged.summaries[s1!.id]).toMatchObject({ status: "ready", text: "from A" });
		expect(merged.summaries[s2!.id]).toMatchObject({ status: "ready", text: "from B" });
		// And the other way round: B's extra Q&A are closed, so A's older view does not drop them.
		const back = mergeArchives(b, a);
		expect(Object.keys(back.nodes).sort()).toEqual(Object.keys(b.nodes).sort());
		expect(back.summaries[s2!.id]).toMatchObject({ status: "ready", text: "from B" });
	});

	it("lets a closed Q&A beat an open one with the same id, whichever side has it", async () => {
		const open = await archiveOf(linear(3, true));
		const closed = await archiveOf([...linear(3, true), reply("a2", "u2", "answer 2")]);
		const id = Object.values(open.nodes).find((n) => !n.completed)!.id;
		expect(closed.nodes[id]?.completed).toBe(true);
		expect(mergeArchives(closed, open).nodes[id]?.completed).toBe(true);
		expect(mergeArchives(open, closed).nodes[id]?.completed).toBe(true);
	});

	it("prefers ready to pending, the newer of two texts, and the writer's own on a tie", async () => {
		const base = await archiveOf(linear(4));
		const id = level1(base)[0]!.id;
		const older = await archiveOf(linear(4), [ready(id, "older", "2026-02-01T00:00:00.000Z")], base);
		const newer = await archiveOf(linear(4), [ready(id, "newer", "2026-03-01T00:00:00.000Z")], base);
		const sameTime = await archiveOf(linear(4), [ready(id, "same time", "2026-02-01T00:00:00.000Z")], base);
		expect(mergeArchives(older, base).summaries[id]?.text).toBe("older");
		expect(mergeArchives(base, older).summaries[id]?.text).toBe("older");
		expect(mergeArchives(older, newer).summaries[id]?.text).toBe("newer");
		expect(mergeArchives(newer, older).summaries[id]?.text).toBe("newer");
		expect(mergeArchives(older, sameTime).summaries[id]?.text).toBe("same time");
	});

	it("keeps a summary stale when one writer saw its child change and the other did not", async () => {
		const base = await archiveOf(linear(4));
		const id = level1(base)[0]!.id;
		const made = await archiveOf(linear(4), [ready(id, "text", "2026-02-01T00:00:00.000Z")], base);
		const stale = await archiveOf(linear(4), [{ type: "SummaryMarkedStale", sessionId: SID, id }], made);
		expect(stale.summaries[id]?.stale).toBe(true);
		expect(mergeArchives(stale, made).summaries[id]?.stale).toBe(true);
		expect(mergeArchives(made, stale).summaries[id]?.stale).toBe(true);
		// A text made after that wins, and is not stale.
		const remade = await archiveOf(linear(4), [ready(id, "new text", "2026-03-01T00:00:00.000Z")], stale);
		expect(mergeArchives(stale, remade).summaries[id]).toMatchObject({ text: "new text" });
		expect(mergeArchives(stale, remade).summaries[id]?.stale).toBeUndefined();
	});

	it("carries the failure with more attempts on a pending summary", async () => {
		const base = await archiveOf(linear(4));
		const id = level1(base)[0]!.id;
		const twice = await archiveOf(linear(4), [failed(id, "2026-02-01T00:00:00.000Z"), failed(id, "2026-02-01T00:01:00.000Z")], base);
		const once = await archiveOf(linear(4), [failed(id, "2026-02-02T00:00:00.000Z")], base);
		expect(mergeArchives(twice, once).summaries[id]?.failure?.attempts).toBe(2);
		expect(mergeArchives(once, twice).summaries[id]?.failure?.attempts).toBe(2);
		expect(mergeArchives(twice, base).summaries[id]?.failure?.attempts).toBe(2);
	});

	it("takes the writer's branches and drops what they no longer reach, except closed Q&A and ready summaries", async () => {
		// Stored: an open Q&A at the leaf and a pending plan over it. Mine: the open Q&A absorbed a
		// retry (new id), so both are superseded.
		const stored = await archiveOf(linear(4, true));
		const mine = await archiveOf([...linear(4, true), user("u3b", "u3", "retry"), reply("a3", "u3b", "done")]);
		const staleOpen = Object.values(stored.nodes).find((n) => !n.completed)!.id;
		const stalePlan = level1(stored)[0]!.id;
		expect(mine.nodes[staleOpen]).toBeUndefined();
		expect(mine.summaries[stalePlan]).toBeUndefined();
		const merged = mergeArchives(stored, mine);
		expect(merged).toBe(mine);
		expect(merged.branches).toEqual(mine.branches);

		// A ready summary and a closed node are kept even when no branch of mine reaches them.
		const storedReady = await archiveOf(linear(4, true), [ready(stalePlan, "kept", "2026-02-01T00:00:00.000Z")]);
		const withClosed = { ...storedReady, nodes: { ...storedReady.nodes, qa_elsewhere: { ...Object.values(mine.nodes)[0]!, id: "qa_elsewhere" } } };
		const kept = mergeArchives(withClosed, mine);
		expect(kept.summaries[stalePlan]).toMatchObject({ status: "ready", text: "kept" });
		expect(kept.nodes.qa_elsewhere).toBeDefined();
		expect(kept.nodes[staleOpen]).toBeUndefined();
	});

	it("unites rejected lines by line number, keeps at most the stored maximum and the larger count", async () => {
		const a = await archiveOf(linear(2, false, ["junk a", "junk b"]));
		const b = await archiveOf(linear(2, false, ["junk a", "other", "more"]));
		const merged = mergeArchives(a, b);
		expect(merged.rejections.lines.map((l) => l.line).sort()).toEqual([6, 7, 8]);
		expect(merged.rejections.count).toBe(3);
		const many = (from: number) => Array.from({ length: MAX_STORED_REJECTIONS }, (_, i) => ({ line: from + i, reason: "x", bytes: 1 }));
		const big = mergeArchives({ ...a, rejections: { count: 250, lines: many(1) } }, { ...b, rejections: { count: 210, lines: many(100) } });
		expect(big.rejections.lines).toHaveLength(MAX_STORED_REJECTIONS);
		expect(big.rejections.count).toBe(250);
	});

	it("loses nothing whatever order three writers' archives are merged in", async () => {
		const base = await archiveOf(linear(16));
		const ids = level1(base).map((s) => s.id);
		const writers = await Promise.all([0, 1, 2].map((w) => archiveOf(linear(16), [ready(ids[w]!, `writer ${w}`, `2026-02-0${w + 1}T00:00:00.000Z`)], base)));
		for (const order of [
			[0, 1, 2],
			[2, 1, 0],
			[1, 0, 2],
		]) {
			const merged = order.map((i) => writers[i]!).reduce((disk, mine) => mergeArchives(disk, mine));
			for (let w = 0; w < 3; w++) expect(merged.summaries[ids[w]!]).toMatchObject({ status: "ready", text: `writer ${w}` });
			expect(Object.keys(merged.nodes).sort()).toEqual(Object.keys(base.nodes).sort());
		}
	});
});
