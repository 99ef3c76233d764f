/**
 * The history picker fits the terminal: with 60 rows at 80×24 the title, the position and the
 * selected row are on screen, every line is one terminal line, and Enter opens the row shown as
 * selected. (Pi's own select drew every row, wrapped: the title and the selection scrolled away.)
 * It reaches every row, a page at a time (it offered the first 50 of 919 sessions and no more),
 * moves by PgUp/PgDn/Home/End, and keeps a hit's match on screen in its detail.
 */
import { type SelectItem, visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { HistoryPicker, type PickerDetail, type PickerPage } from "../../src/integrations/pi/history/picker.ts";
import { waitFor } from "../helpers/waitFor.ts";

const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t, inverse: (t: string) => `>${t}<` };
const KEY = { up: "\x1b[A", down: "\x1b[B", pageUp: "\x1b[5~", pageDown: "\x1b[6~", home: "\x1b[H", end: "\x1b[F", enter: "\r" };

function rows(count: number): SelectItem[] {
	return Array.from({ length: count }, (_, i) => ({
		value: `session-${i + 1}`,
		label: `${String(i + 1).padStart(2)}. A long session title that would wrap on a narrow terminal, number ${i + 1}  ·  2026-11-${String((i % 28) + 1).padStart(2, "0")}  ·  ${i} Q&A`,
	}));
}
const items = rows(60);

function pageAt(all: readonly SelectItem[], offset: number, size = 50): PickerPage {
	return { items: all.slice(offset, offset + size), total: all.length, nextOffset: offset + size < all.length ? offset + size : null };
}

/** A real page function over an in-memory list (answering a moment later, as the archive does), and the offsets it was asked for. */
function pagesOf(all: readonly SelectItem[]) {
	const asked: number[] = [];
	let failures = 0;
	const load = async (offset: number): Promise<PickerPage> => {
		asked.push(offset);
		await new Promise((r) => setTimeout(r, 5));
		if (failures > 0) {
			failures--;
			throw new Error("the archive is busy");
		}
		return pageAt(all, offset);
	};
	return { first: pageAt(all, 0), load, asked, failNext: () => failures++ };
}

function open(
	terminalRows: number,
	first: PickerPage = { items, total: items.length, nextOffset: null },
	more: Partial<{ load: (offset: number) => Promise<PickerPage>; detail: (value: string) => PickerDetail | undefined }> = {},
) {
	let chosen: string | undefined | null = null;
	let redraws = 0;
	const picker = new HistoryPicker(`pbot history — ${first.total} session(s), newest first`, first, {
		rows: () => terminalRows,
		theme,
		done: (value) => (chosen = value),
		redraw: () => redraws++,
		...more,
	});
	const position = () => picker.render(80)[1];
	const press = (key: string, times = 1) => {
		for (let i = 0; i < times; i++) picker.handleInput(key);
	};
	const arrived = () => waitFor(() => !position()?.includes("loading"), "the page to arrive");
	return { picker, chosen: () => chosen, redraws: () => redraws, position, press, arrived };
}

describe("the history picker", () => {
	it("at 80×24 keeps the title, the position and the selected row on screen, one line per row", () => {
		const { picker, chosen } = open(24);
		let lines = picker.render(80);
		expect(lines.length).toBeLessThanOrEqual(24 - 8);
		for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
		expect(lines[0]).toContain("newest first");
		expect(lines[1]).toBe("1 of 60");
		for (let i = 0; i < 40; i++) picker.handleInput(KEY.down);
		lines = picker.render(80);
		expect(lines[0]).toContain("newest first");
		expect(lines[1]).toBe("41 of 60");
		expect(lines.join("\n")).toContain("41. A long session");
		picker.handleInput(KEY.enter);
		expect(chosen()).toBe("session-41");
	});

	it("closes without a choice on Escape, q or Ctrl+C; grows its window with the terminal", () => {
		for (const key of ["\x1b", "q", "\x03"]) {
			const { picker, chosen } = open(24);
			picker.handleInput(key);
			expect(chosen()).toBeUndefined();
		}
		let terminalRows = 24;
		const picker = new HistoryPicker("t", { items, total: 60, nextOffset: null }, { rows: () => terminalRows, theme, done: () => undefined });
		const small = picker.render(80).length;
		terminalRows = 50;
		expect(picker.render(80).length).toBeGreaterThan(small);
	});

	it("pages through 120 rows with End, Down and PgDn, loading each page once, and opens row 120", async () => {
		const all = rows(120);
		const pages = pagesOf(all);
		const { picker, chosen, redraws, position, press, arrived } = open(24, pages.first, { load: pages.load });
		expect(position()).toBe("1 of 120 · 50 loaded");
		press(KEY.end);
		expect(position()).toBe("50 of 120 · 50 loaded · loading…");
		// A key typed while the page is coming counts from where it leads (row 51), and asks for nothing more.
		press(KEY.down);
		expect(position()).toBe("50 of 120 · 50 loaded · loading…");
		expect(pages.asked).toEqual([50]);
		await arrived();
		expect(redraws()).toBeGreaterThanOrEqual(2); // "loading…", then the page
		expect(position()).toBe("51 of 120 · 100 loaded");
		expect(picker.render(80).join("\n")).toContain("51. A long session");
		press(KEY.up);
		expect(position()).toBe("50 of 120 · 100 loaded");
		press(KEY.pageDown, 10); // past row 100, the last loaded: the third page comes, and the selection goes on to the end
		expect(position()).toBe("100 of 120 · 100 loaded · loading…");
		await arrived();
		expect(pages.asked).toEqual([50, 100]);
		expect(position()).toBe("120 of 120");
		press(KEY.end);
		expect(position()).toBe("120 of 120");
		expect(pages.asked).toEqual([50, 100]);
		expect(picker.render(80).join("\n")).toContain("120. A long session");
		press(KEY.enter);
		expect(chosen()).toBe("session-120");
	});

	it("takes keys typed while a page loads as typed: End, Down, Enter opens row 51; End pressed again goes a page further", async () => {
		const pages = pagesOf(rows(180));
		const { press, position, arrived, chosen } = open(24, pages.first, { load: pages.load });
		press(KEY.end);
		press(KEY.down);
		expect(position()).toBe("50 of 180 · 50 loaded · loading…"); // shown where it is until the page comes
		press(KEY.enter); // the row it means is not here yet: opened when it is
		expect(chosen()).toBeNull();
		await arrived();
		expect(chosen()).toBe("session-51");

		const again = open(24, pagesOf(rows(180)).first, { load: pagesOf(rows(180)).load });
		again.press(KEY.end);
		again.press(KEY.end); // while page 2 loads: to its last row, which asks for page 3
		await again.arrived();
		await again.arrived();
		expect(again.position()).toBe("100 of 180 · 150 loaded");
	});

	it("does not wrap while rows are still to come; wraps both ways once every row is here", async () => {
		const pages = pagesOf(rows(120));
		const { press, position, arrived } = open(24, pages.first, { load: pages.load });
		press(KEY.up);
		expect(position()).toBe("1 of 120 · 50 loaded");
		press(KEY.down, 49);
		expect(position()).toBe("50 of 120 · 50 loaded · loading…");
		await arrived();
		press(KEY.end); // row 100: the last page comes
		await arrived();
		press(KEY.end);
		expect(position()).toBe("120 of 120");
		press(KEY.end);
		press(KEY.down);
		expect(position()).toBe("1 of 120");
		press(KEY.up);
		expect(position()).toBe("120 of 120");
	});

	it("moves a window's rows with PgUp and PgDn, to the first and last row with Home and End, without wrapping", () => {
		const { picker, press, position } = open(24);
		const window = picker.render(80).filter((line) => line.includes("A long session")).length;
		expect(window).toBeGreaterThan(3);
		press(KEY.pageDown);
		expect(position()).toBe(`${1 + window} of 60`);
		press(KEY.pageDown);
		expect(position()).toBe(`${1 + 2 * window} of 60`);
		press(KEY.pageUp);
		expect(position()).toBe(`${1 + window} of 60`);
		press(KEY.end);
		expect(position()).toBe("60 of 60");
		press(KEY.pageDown);
		expect(position()).toBe("60 of 60");
		press(KEY.home);
		expect(position()).toBe("1 of 60");
		press(KEY.pageUp);
		expect(position()).toBe("1 of 60");
		expect(picker.render(80).at(-1)).toMatch(/PgUp PgDn Home End/);
	});

	it("shows a failed page load in the picker and tries again at the next key", async () => {
		const pages = pagesOf(rows(120));
		const { picker, press, position, arrived } = open(24, pages.first, { load: pages.load });
		pages.failNext();
		press(KEY.end);
		await arrived();
		expect(position()).toBe("50 of 120 · 50 loaded");
		expect(picker.render(80).join("\n")).toContain("could not load more rows: the archive is busy");
		press(KEY.down); // asks again, and goes on to the row it meant
		await arrived();
		expect(pages.asked).toEqual([50, 50]);
		expect(position()).toBe("51 of 120 · 100 loaded");
		expect(picker.render(80).join("\n")).not.toContain("could not load");
	});

	it("shows the match of a CJK hit far into a long run, within two lines of the width, and the detail of later pages' rows", async () => {
		const inverse = { ...theme, inverse: (t: string) => `\x1b[7m${t}\x1b[27m` };
		// About 80 characters of context before the match (160 columns), paragraphs apart, no spaces.
		const snippet = `…上一段的结尾。\n\n${"这是一段很长的中文文本没有任何空格".repeat(5)}白鹭${"后面还有更多的文字".repeat(9)}…`;
		const start = snippet.indexOf("白鹭");
		const all = rows(120);
		const details = new Map(all.map((row) => [row.value, { label: "match:", text: snippet, match: { start, length: 2 } }]));
		const pages = pagesOf(all);
		const picker = new HistoryPicker("hits", pages.first, {
			rows: () => 24,
			theme: inverse,
			done: () => undefined,
			load: pages.load,
			detail: (v) => details.get(v),
		});
		const check = () => {
			const lines = picker.render(80);
			for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
			const detail = lines.slice(-3, -1); // the two detail lines, above the key hint
			expect(detail.join("\n")).toContain("\x1b[7m白鹭\x1b[27m");
			expect(detail[0]).toMatch(/^match: …/);
			expect(lines.join("")).not.toContain("\n");
		};
		check();
		picker.handleInput(KEY.end);
		await waitFor(() => !picker.render(80)[1]?.includes("loading"), "the second page");
		picker.handleInput(KEY.down);
		expect(picker.selectedIndex).toBe(50);
		check();
	});

	it("leaves a detail whose match fits as it is, whitespace runs as one space", () => {
		const snippet = "The heron\n\nwaits at the river's edge, still as a post, for the fish that come near the bank.";
		const start = snippet.indexOf("river");
		const { picker } = open(24, { items, total: 60, nextOffset: null }, { detail: () => ({ label: "match:", text: snippet, match: { start, length: 5 } }) });
		const lines = picker.render(80);
		expect(lines.slice(-3, -1).join(" ")).toContain("match: The heron waits at the >river<'s edge");
	});
});
