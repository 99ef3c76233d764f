import { describe, expect, it } from "vitest";
import { applyArchiveEvents, evolveSession, initialArchiveState, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import { archiveEvents } from "../../src/services/history/projections/archiveEvents.ts";
import { fixtureEvents, fixtureKeys } from "../helpers/fixtures.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { jsonl, linearSession, ofType, replayEvents, reply, user } from "../helpers/entries.ts";

const SID = "0190aaaa-0000-7000-8000-000000000001";

/** A linear session of n answered questions. */
const linear = (n: number, openTail = false) => linearSession(SID, n, { openTail });

describe("archive projection", () => {
	it("given the events of a session, holds its Q&A, plans and branches", async () => {
		const events = await replayEvents(jsonl(linear(9)));
		const state = applyArchiveEvents(initialArchiveState(), events);
		const archive = state.sessions[SID]!;
		expect(Object.keys(archive.nodes)).toHaveLength(9);
		expect(Object.values(archive.summaries).map((s) => [s.level, s.status])).toEqual([
			[1, "pending"],
			[1, "pending"],
		]);
		expect(archive.branches).toHaveLength(1);
	});

	it("keeps a summary's text when the session is ingested again and grows", async () => {
		const first = applyArchiveEvents(initialArchiveState(), await replayEvents(jsonl(linear(8))));
		const planned = Object.values(first.sessions[SID]!.summaries)[0]!;
		const withText = applyArchiveEvents(first, [
			{ type: "SummaryReady", sessionId: SID, id: planned.id, text: "We chose X.", model: "faux/faux-1", at: "2026-02-01T00:00:00.000Z" },
		]);
		const again = applyArchiveEvents(withText, await replayEvents(jsonl(linear(20))));
		const kept = again.sessions[SID]!.summaries[planned.id]!;
		expect(kept).toMatchObject({ status: "ready", text: "We chose X.", model: "faux/faux-1" });
		expect(Object.keys(again.sessions[SID]!.nodes)).toEqual(expect.arrayContaining(Object.keys(withText.sessions[SID]!.nodes)));
	});

	it("returns the same state object when an ingest brings nothing new", async () => {
		const bytes = jsonl(linear(6));
		const state = applyArchiveEvents(initialArchiveState(), await replayEvents(bytes));
		expect(applyArchiveEvents(state, await replayEvents(bytes))).toBe(state);
	});

	it("keeps an open Q&A's id when its answer arrives, and makes it completed", async () => {
		const open = await replayEvents(jsonl(linear(3, true)));
		const openNode = ofType(open, "QaObserved").at(-1)!.node;
		expect(openNode.completed).toBe(false);
		const closed = await replayEvents(jsonl([...linear(3, true), reply("a2", "u2", "answer 2")]));
		const closedNode = ofType(closed, "QaObserved").find((e) => e.node.id === openNode.id)!.node;
		expect(closedNode.completed).toBe(true);
	});

	it("drops an open Q&A that a later input superseded, but no closed node", async () => {
		const before = applyArchiveEvents(initialArchiveState(), await replayEvents(jsonl(linear(3, true))));
		const openId = Object.values(before.sessions[SID]!.nodes).find((n) => !n.completed)!.id;
		const after = applyArchiveEvents(before, await replayEvents(jsonl([...linear(3, true), user("u2b", "u2", "retry"), reply("a2", "u2b", "done")])));
		const nodes = after.sessions[SID]!.nodes;
		expect(nodes[openId]).toBeUndefined();
		expect(Object.values(nodes).filter((n) => n.completed)).toHaveLength(3);
		expect(
			Object.values(nodes)
				.find((n) => n.parts.some((p) => p.entryId === "u2b"))
				?.parts.map((p) => p.text),
		).toEqual(["question 2", "retry", "done"]);
	});

	it("records a failure on the summary and clears it when a text arrives", async () => {
		const state = applyArchiveEvents(initialArchiveState(), await replayEvents(jsonl(linear(4))));
		const id = Object.keys(state.sessions[SID]!.summaries)[0]!;
		const failed = applyArchiveEvents(state, [
			{ type: "SummaryFailed", sessionId: SID, id, error: "rate limited", at: "2026-02-01T00:00:00.000Z" },
			{ type: "SummaryFailed", sessionId: SID, id, error: "rate limited", at: "2026-02-01T00:01:00.000Z" },
		]);
		expect(failed.sessions[SID]!.summaries[id]).toMatchObject({ status: "pending", failure: { attempts: 2 } });
		const ready = applyArchiveEvents(failed, [{ type: "SummaryReady", sessionId: SID, id, text: "t", model: "m", at: "2026-02-01T00:02:00.000Z" }]);
		expect(ready.sessions[SID]!.summaries[id]?.failure).toBeUndefined();
	});

	it("rebuilds the same archive from its own events", async () => {
		const state = applyArchiveEvents(initialArchiveState(), [...(await replayEvents(jsonl([...linear(13), "not json"])))]);
		const archive = state.sessions[SID]!;
		const rebuilt = applyArchiveEvents(initialArchiveState(), archiveEvents(archive)).sessions[SID];
		expect(rebuilt).toEqual(archive);
	});

	it("gives the same archive whether a session's events come in one batch or one at a time, on every fixture", async () => {
		const keys = fixtureKeys();
		expect(keys.length).toBeGreaterThan(10);
		const oneByOne = (events: readonly HistoryEvent[]) => {
			let archive: SessionArchive | undefined;
			for (const event of events) archive = evolveSession(archive, [event]);
			return archive;
		};
		for (const key of keys) {
			const events = await fixtureEvents(key);
			expect(evolveSession(undefined, events), key).toEqual(oneByOne(events));
		}
		// Summaries made ready and failed, stale marks and rejections take the same path.
		const archive = evolveSession(undefined, await replayEvents(jsonl([...linear(9), "not json"])))!;
		const [first, second] = Object.values(archive.summaries);
		const more = [
			...archiveEvents(archive),
			{ type: "SummaryReady" as const, sessionId: SID, id: first!.id, text: "one", model: "m", at: "2026-01-01T00:00:00.000Z" },
			{ type: "SummaryMarkedStale" as const, sessionId: SID, id: first!.id },
			{ type: "SummaryFailed" as const, sessionId: SID, id: second!.id, error: "boom", at: "2026-01-01T00:00:00.000Z" },
		];
		expect(evolveSession(undefined, more)).toEqual(oneByOne(more));
	});

	it("touches only the sessions the events name: another session's archive keeps its identity", async () => {
		const other = "0190aaaa-0000-7000-8000-000000000002";
		const state = applyArchiveEvents(initialArchiveState(), [
			...(await replayEvents(jsonl(linear(4)))),
			...(await replayEvents(jsonl(linearSession(other, 2)))),
		]);
		const id = Object.keys(state.sessions[SID]!.summaries)[0]!;
		const next = applyArchiveEvents(state, [{ type: "SummaryReady", sessionId: SID, id, text: "t", model: "m", at: "2026-02-01T00:02:00.000Z" }]);
		expect(next.sessions[other]).toBe(state.sessions[other]);
		expect(next.sessions[SID]).not.toBe(state.sessions[SID]);
		expect(evolveSession(undefined, [{ type: "SummaryMarkedStale", sessionId: SID, id }])).toBeUndefined();
	});
});
