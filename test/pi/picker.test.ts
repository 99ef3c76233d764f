/**
 * The history picker fits the terminal: with 60 rows at 80×24 the title, the position and the
 * selected row are on screen, every line is one terminal line, and Enter opens the row shown as
 * selected. (Pi's own select drew every row, wrapped: the title and the selection scrolled away.)
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { HistoryPicker } from "../../src/integrations/pi/history/picker.ts";

const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t, inverse: (t: string) => `>${t}<` };
const items = Array.from({ length: 60 }, (_, i) => ({
	value: `session-${i + 1}`,
	label: `${String(i + 1).padStart(2)}. A long session title that would wrap on a narrow terminal, number ${i + 1}  ·  2026-11-${String((i % 28) + 1).padStart(2, "0")}  ·  ${i} Q&A`,
}));

function open(rows: number) {
	let chosen: string | undefined | null = null;
	const picker = new HistoryPicker("pbot history — 60 session(s), newest first", items, { rows: () => rows, theme, done: (value) => (chosen = value) });
	return { picker, chosen: () => chosen };
}

describe("the history picker", () => {
	it("at 80×24 keeps the title, the position and the selected row on screen, one line per row", () => {
		const { picker, chosen } = open(24);
		let lines = picker.render(80);
		expect(lines.length).toBeLessThanOrEqual(24 - 8);
		for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
		expect(lines[0]).toContain("newest first");
		expect(lines[1]).toBe("1 of 60");
		for (let i = 0; i < 40; i++) picker.handleInput("\x1b[B"); // down
		lines = picker.render(80);
		expect(lines[0]).toContain("newest first");
		expect(lines[1]).toBe("41 of 60");
		expect(lines.join("\n")).toContain("41. A long session");
		picker.handleInput("\r");
		expect(chosen()).toBe("session-41");
	});

	it("closes without a choice on Escape, q or Ctrl+C; grows its window with the terminal", () => {
		for (const key of ["\x1b", "q", "\x03"]) {
			const { picker, chosen } = open(24);
			picker.handleInput(key);
			expect(chosen()).toBeUndefined();
		}
		let rows = 24;
		const picker = new HistoryPicker("t", items, { rows: () => rows, theme, done: () => undefined });
		const small = picker.render(80).length;
		rows = 50;
		expect(picker.render(80).length).toBeGreaterThan(small);
	});
});
