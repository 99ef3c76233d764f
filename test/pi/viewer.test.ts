import { describe, expect, it } from "vitest";
import { applyArchiveEvents, initialArchiveState } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { readNode } from "../../src/services/history/query/index.ts";
import { buildQueryView } from "../../src/services/history/projections/queryView.ts";
import { HistoryViewer, type ViewerExit } from "../../src/integrations/pi/history/viewer.ts";
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

/**
 * A viewer over real archives, reading through the query service's `readNode` (counted), on a
 * terminal of `rows` (changeable: `resize`); `back` as the viewer's option.
 */
async function viewerOver(events: Awaited<ReturnType<typeof fixtureEvents>>, firstId: (ids: string[]) => string, rows = 30, back?: string) {
	const view = buildQueryView(applyArchiveEvents(initialArchiveState(), events));
	const reads: { id: string; offset: number; childrenOffset: number }[] = [];
	const load = async (id: string, offset: number, childrenOffset: number) => {
		reads.push({ id, offset, childrenOffset });
		return readNode(view, { id, offset, childrenOffset });
	};
	const exits: ViewerExit[] = [];
	let redraws = 0;
	let terminalRows = rows;
	const first = await load(firstId([...view.nodes.keys()]), 0, 0);
	const viewer = new HistoryViewer(first, {
		load,
		rows: () => terminalRows,
		theme,
		done: (how) => exits.push(how),
		redraw: () => redraws++,
		...(back !== undefined ? { back } : {}),
	});
	return {
		viewer,
		reads,
		closed: () => exits.includes("closed"),
		exits,
		redraws: () => redraws,
		view,
		resize: (to: number) => void (terminalRows = to),
	};
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
		const { viewer, closed } = await viewerOver(events, (ids) => ids.find((id) => id.startsWith("qa_")) as string, 50, "list");
		const lines = viewer.render(80);
		// A short Q&A: far fewer lines than the 50-row terminal allows, none of them padding.
		expect(lines.length).toBeLessThan(50 - 8);
		expect(lines.at(-1)).toMatch(/^q close · Enter open · Backspace back/);
		viewer.handleInput("\x03"); // Ctrl+C
		expect(closed()).toBe(true);
	});
});

describe("HistoryViewer on long bodies, many links and small terminals", () => {
	it("shows the end of a long body with one End, loading the rest; PgUp, Up and Home work from there", async () => {
		const events = await fixtureEvents("long-answer");
		const { viewer, reads, view } = await viewerOver(events, longAnswerOf(events));
		const node = viewer.current;
		expect(node.nextOffset).not.toBeNull();
		expect(position(viewer).more).toBe(true);
		viewer.handleInput(KEY.end);
		await waitFor(() => !screen(viewer).includes("loading"), "the rest of the body");
		const end = position(viewer);
		expect(end).toMatchObject({ more: false, to: end.of });
		expect(end.from).toBeGreaterThan(1);
		// Every slice read once, in order, up to the end of the body.
		const offsets = reads.filter((r) => r.offset > 0).map((r) => r.offset);
		expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
		expect(new Set(offsets).size).toBe(offsets.length);
		// The last line shown is the end of the body's last line.
		const tail = readNode(view, { id: node.id, offset: node.totalLength - 400, limit: 400 }).body;
		const lastLine = tail.trimEnd().split("\n").at(-1) as string;
		const lines = viewer.render(100);
		const shown = lines[lines.findIndex((l) => /\d+–\d+ of \d+ lines/.test(l)) - 1] as string;
		expect(shown.trim().length).toBeGreaterThan(0);
		expect(lastLine.trimEnd().endsWith(shown.trim())).toBe(true);
		// From the end: a page up, a line up, back to the end, then the top.
		const rows = end.to - end.from + 1;
		viewer.handleInput(KEY.pageUp);
		expect(position(viewer)).toMatchObject({ from: end.from - (rows - 1), of: end.of, more: false });
		viewer.handleInput(KEY.up);
		expect(position(viewer).from).toBe(end.from - rows);
		viewer.handleInput(KEY.end);
		expect(position(viewer)).toMatchObject({ from: end.from, to: end.of });
		viewer.handleInput(KEY.home);
		expect(position(viewer).from).toBe(1);
	});

	it("keeps the header, the position line and the key line on a small terminal (12 and 8 rows)", async () => {
		const SID = "0190dddd-0000-7000-8000-000000000001";
		const sessionView = await viewerOver(await manyBranches(SID, 240), () => SID, 12);
		const events = await fixtureEvents("long-answer");
		const answerView = await viewerOver(events, longAnswerOf(events), 12);
		for (const { viewer, resize } of [sessionView, answerView]) {
			const kind = viewer.current.kind === "session" ? "Session" : "Q&A";
			for (const rows of [12, 8]) {
				resize(rows);
				const lines = viewer.render(50);
				// Pi keeps its footer (3 lines at most) under the viewer: the rest is the viewer's.
				expect(lines.length, `${kind} at ${rows} rows:\n${lines.join("\n")}`).toBeLessThanOrEqual(rows - 3);
				expect(lines[0]).toMatch(new RegExp(`^${kind} · `));
				expect(lines.some((l) => /^1–\d+ of \d+\+? lines/.test(l))).toBe(true);
				expect(lines.at(-1)).toMatch(/^q close/);
				expect(position(viewer).to).toBeGreaterThanOrEqual(1);
			}
		}
		// With 12 rows the selected link still shows (Enter opens what is shown).
		sessionView.resize(12);
		expect(screen(sessionView.viewer, 50)).toMatch(/^>↓ /m);
	});

	it("keeps about half of an 80×24 terminal's viewer for the body with 241 children, the links scrolling in the rest", async () => {
		const SID = "0190eeee-0000-7000-8000-000000000001";
		const { viewer, reads } = await viewerOver(await manyBranches(SID, 240), () => SID, 24);
		expect(viewer.current.totalChildren).toBe(241);
		const { from, to } = position(viewer);
		expect(to - from + 1).toBeGreaterThanOrEqual(8);
		const lines = viewer.render(80);
		expect(lines.length).toBeLessThanOrEqual(24 - 8);
		expect(lines.join("\n")).toContain("Children 241 (20 loaded)");
		// The selection moves through the loaded children and on to the next page, always on screen.
		for (let i = 0; i < 25; i++) {
			viewer.handleInput(KEY.tab);
			expect(screen(viewer, 80)).toMatch(/^>↓ /m);
			await waitFor(() => !screen(viewer).includes("loading"), "the children page");
		}
		expect(reads.some((r) => r.childrenOffset === 20)).toBe(true);
		expect(position(viewer).to - position(viewer).from + 1).toBeGreaterThanOrEqual(8);
	});

	it("goes back to where the first node was opened from with Backspace, and says so in the key line", async () => {
		const events = await fixtureEvents("many-qa-72");
		const sessionId = sessionOf(events);
		const { viewer, exits } = await viewerOver(events, () => sessionId, 30, "list");
		expect(viewer.render(200).at(-1)).toContain("Backspace back to list");
		viewer.handleInput(KEY.enter); // the first child
		await waitFor(() => viewer.depth === 2, "the child to open");
		expect(viewer.render(200).at(-1)).toContain("Backspace back ·");
		viewer.handleInput(KEY.backspace); // back in the trail, still open
		expect(viewer.depth).toBe(1);
		expect(exits).toEqual([]);
		viewer.handleInput(KEY.backspace); // nothing left in the trail: back to the list
		expect(exits).toEqual(["back"]);

		// Opened from nowhere: Backspace on the first node does nothing, and the key line does not offer it.
		const alone = await viewerOver(events, () => sessionId, 30);
		expect(alone.viewer.render(200).at(-1)).not.toContain("Backspace");
		alone.viewer.handleInput(KEY.backspace);
		expect(alone.exits).toEqual([]);
		alone.viewer.handleInput("q");
		expect(alone.exits).toEqual(["closed"]);
	});
});

/** The position line's numbers: `from–to of N[+] lines`. */
function position(viewer: HistoryViewer): { from: number; to: number; of: number; more: boolean } {
	const m = /(\d+)–(\d+) of (\d+)(\+?) lines/.exec(screen(viewer));
	if (!m) throw new Error(`no position line in:\n${screen(viewer)}`);
	return { from: Number(m[1]), to: Number(m[2]), of: Number(m[3]), more: m[4] === "+" };
}

/** The long-answer fixture's Q&A with an answer of over 60,000 characters. */
function longAnswerOf(events: HistoryEvent[]): (ids: string[]) => string {
	return (ids) =>
		ids.find(
			(id) => id.startsWith("qa_") && events.some((e) => e.type === "QaObserved" && e.node.id === id && e.node.parts.some((p) => p.text.length > 60_000)),
		) as string;
}

/** A session of a root Q&A and `count` branches from its answer: the session has `count + 1` children. */
async function manyBranches(sessionId: string, count: number): Promise<HistoryEvent[]> {
	const lines: unknown[] = [header(sessionId), user("u0", null, "root question"), reply("a0", "u0", "root answer")];
	for (let i = 1; i <= count; i++) lines.push(user(`u${i}`, "a0", `branch ${i} question`), reply(`a${i}`, `u${i}`, `branch ${i} answer`));
	return replayEvents(jsonl(lines));
}

function sessionOf(events: HistoryEvent[]): string {
	const seen = events.find((e) => e.type === "SessionSeen");
	if (seen?.type !== "SessionSeen") throw new Error("no session");
	return seen.session.sessionId;
}
