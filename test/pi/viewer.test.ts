import { describe, expect, it } from "vitest";
import { applyArchiveEvents, initialArchiveState } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { readNode } from "../../src/services/history/query/index.ts";
import { buildQueryView } from "../../src/services/history/projections/queryView.ts";
import { HistoryViewer } from "../../src/integrations/pi/history/viewer.ts";
import { header, jsonl, replayEvents, reply, user } from "../helpers/entries.ts";
import { fixtureEvents } from "../helpers/fixtures.ts";
import { waitFor } from "../helpers/waitFor.ts";

const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t, inverse: (t: string) => `>${t}<` };
const KEY = {
	down: "\x1b[B",
	up: "\x1b[A",
	pageDown: "\x1b[6~",
	pageUp: "\x1b[5~",
	home: "\x1b[H",
	end: "\x1b[F",
	tab: "\t",
	shiftTab: "\x1b[Z",
	enter: "\r",
	backspace: "\x7f",
	esc: "\x1b",
};

/** A viewer over real archives, reading through the query service's `readNode` (counted). */
async function viewerOver(events: Awaited<ReturnType<typeof fixtureEvents>>, firstId: (ids: string[]) => string, rows = 30) {
	const view = buildQueryView(applyArchiveEvents(initialArchiveState(), events));
	const reads: { id: string; offset: number; childrenOffset: number }[] = [];
	const load = async (id: string, offset: number, childrenOffset: number) => {
		reads.push({ id, offset, childrenOffset });
		return readNode(view, { id, offset, childrenOffset });
	};
	let closed = false;
	let redraws = 0;
	const first = await load(firstId([...view.nodes.keys()]), 0, 0);
	const viewer = new HistoryViewer(first, { load, rows: () => rows, theme, done: () => (closed = true), redraw: () => redraws++ });
	return { viewer, reads, closed: () => closed, redraws: () => redraws, view };
}

const screen = (v: HistoryViewer, width = 100) => v.render(width).join("\n");

describe("HistoryViewer", () => {
	it("scrolls a long body and loads its next page when the person nears the end", async () => {
		const events = await fixtureEvents("long-answer");
		const { viewer, reads } = await viewerOver(
			events,
			(ids) =>
				ids.find(
					(id) => id.startsWith("qa_") && events.some((e) => e.type === "QaObserved" && e.node.id === id && e.node.parts.some((p) => p.text.length > 60_000)),
				)!,
		);
		expect(viewer.current.nextOffset).not.toBeNull();
		const top = screen(viewer);
		viewer.handleInput(KEY.pageDown);
		expect(screen(viewer)).not.toBe(top);
		viewer.handleInput(KEY.home);
		expect(screen(viewer)).toBe(top);
		for (let i = 0; i < 400 && reads.length < 3; i++) {
			viewer.handleInput(KEY.pageDown);
			await new Promise((r) => setImmediate(r));
		}
		expect(reads.filter((r) => r.offset > 0).length).toBeGreaterThanOrEqual(2);
		viewer.handleInput(KEY.end);
		expect(screen(viewer)).toMatch(/\d+–\d+ of \d+\+? lines/);
		for (const line of viewer.render(60)) expect(line.length).toBeLessThanOrEqual(60 + 20); // ANSI-free stub theme: width holds
	});

	it("opens a child with Enter, goes back with Backspace, chooses with Tab, closes with q or Esc", async () => {
		const events = await fixtureEvents("many-qa-72");
		const sessionId = sessionOf(events);
		const { viewer, closed } = await viewerOver(events, () => sessionId);
		expect(viewer.current.kind).toBe("session");
		// 72 Q&A: a level-3 summary over the first 64, then the level-1 summaries over 65–68 and 69–72.
		expect(screen(viewer)).toContain("Children 3");
		viewer.handleInput(KEY.tab); // second child: the level-1 summary over Q&A 65–68
		viewer.handleInput(KEY.enter);
		await waitFor(() => viewer.depth === 2, "the child to open");
		expect(viewer.current).toMatchObject({ kind: "summary", level: 1, ready: false });
		expect(screen(viewer)).toContain("has not been generated yet");
		viewer.handleInput(KEY.tab); // the first link is its parent (the session); Tab moves to its first child
		viewer.handleInput(KEY.enter);
		await waitFor(() => viewer.depth === 3, "a Q&A to open");
		expect(viewer.current.kind).toBe("qa");
		viewer.handleInput(KEY.backspace);
		viewer.handleInput(KEY.backspace);
		expect(viewer.current.kind).toBe("session");
		viewer.handleInput("x"); // typing goes nowhere
		expect(closed()).toBe(false);
		viewer.handleInput(KEY.esc);
		expect(closed()).toBe(true);
	});

	it("pages children 20 at a time as the selection moves down", async () => {
		const SID = "0190cccc-0000-7000-8000-000000000001";
		const lines: unknown[] = [header(SID), user("u0", null, "root question"), reply("a0", "u0", "root answer")];
		for (let i = 1; i <= 30; i++) lines.push(user(`u${i}`, "a0", `branch ${i} question`), reply(`a${i}`, `u${i}`, `branch ${i} answer`));
		const { viewer, reads } = await viewerOver(await replayEvents(jsonl(lines)), () => SID);
		expect(viewer.current.totalChildren).toBe(31);
		expect(viewer.current.children).toHaveLength(20);
		for (let i = 0; i < 19; i++) viewer.handleInput(KEY.tab);
		await waitFor(() => reads.some((r) => r.childrenOffset === 20), "the second page of children");
		await waitFor(() => screen(viewer).includes("Children 31") && !screen(viewer).includes("(20 loaded)"), "all children loaded");
		for (let i = 0; i < 11; i++) viewer.handleInput(KEY.tab);
		expect(screen(viewer)).toContain(">↓ Q&A");
	});

	it("reports a failed read and stays open", async () => {
		const events = await fixtureEvents("abort-at-leaf");
		const view = buildQueryView(applyArchiveEvents(initialArchiveState(), events));
		const sessionId = sessionOf(events);
		const errors: string[] = [];
		let calls = 0;
		const viewer = new HistoryViewer(readNode(view, { id: sessionId }), {
			load: async () => {
				calls++;
				throw new Error("disk on fire");
			},
			rows: () => 30,
			theme,
			done: () => undefined,
			redraw: () => undefined,
			onError: (m) => errors.push(m),
		});
		viewer.handleInput(KEY.enter);
		await waitFor(() => errors.length === 1, "the error");
		expect(calls).toBe(1);
		expect(screen(viewer)).toContain("could not read: disk on fire");
		expect(viewer.depth).toBe(1);
	});

	it("is as tall as its content, keeps 'q close' on an 80-column key line, and closes on Ctrl+C", async () => {
		const events = await fixtureEvents("abort-at-leaf");
		const { viewer, closed } = await viewerOver(events, (ids) => ids.find((id) => id.startsWith("qa_")) as string, 50);
		const lines = viewer.render(80);
		// A short Q&A: far fewer lines than the 50-row terminal allows, none of them padding.
		expect(lines.length).toBeLessThan(50 - 8);
		expect(lines.at(-1)).toMatch(/^q close · Enter open · Backspace back/);
		viewer.handleInput("\x03"); // Ctrl+C
		expect(closed()).toBe(true);
	});
});

function sessionOf(events: HistoryEvent[]): string {
	const seen = events.find((e) => e.type === "SessionSeen");
	if (seen?.type !== "SessionSeen") throw new Error("no session");
	return seen.session.sessionId;
}
