import { Key, matchesKey, SelectList, truncateToWidth, wrapTextWithAnsi, type Component, type SelectItem } from "@mariozechner/pi-tui";
import type { ViewerTheme } from "./viewer.ts";

export interface PickerOptions {
	/** Terminal rows, read at every render (the terminal may be resized). */
	readonly rows: () => number;
	readonly theme: ViewerTheme;
	/** The chosen item's value, or `undefined` when the person closed the picker. */
	readonly done: (value: string | undefined) => void;
	/** More about the selected row, shown under the list (up to `DETAIL_ROWS` lines): a hit's match in its context. */
	readonly detail?: (value: string) => string | undefined;
}

/** Terminal rows left to Pi around the picker (its editor, status and footer lines). */
const RESERVED_ROWS = 8;
/** Title, position, the list's scroll line, blank, key hint. */
const OWN_ROWS = 5;
/** Lines of the selected row's detail, when there is one. */
const DETAIL_ROWS = 2;
const HINT = "↑↓ move · Enter open · Esc close";

/**
 * A picker that fits the terminal, whatever the number of rows: one line per row (cut to the
 * width), a window of rows that scrolls with the selection (pi-tui's `SelectList`), and the title
 * and "12 of 50" always on screen, so Enter opens the row the person sees selected. (Pi's own
 * `select` shows every row, wrapped: 50 sessions pushed the title and the selection off an 80×24
 * screen.)
 */
export class HistoryPicker implements Component {
	private list: SelectList;
	private visible = 0;

	constructor(
		private readonly title: string,
		private readonly items: readonly SelectItem[],
		private readonly options: PickerOptions,
	) {
		this.list = this.makeList(this.windowRows());
	}

	/** The selected row's index (for tests and the position line). */
	get selectedIndex(): number {
		const selected = this.list.getSelectedItem();
		return selected ? this.items.findIndex((i) => i.value === selected.value) : -1;
	}

	render(width: number): string[] {
		const t = this.options.theme;
		const rows = this.windowRows();
		if (rows !== this.visible) {
			const selected = Math.max(0, this.selectedIndex);
			this.list = this.makeList(rows);
			this.list.setSelectedIndex(selected);
		}
		const position = `${this.selectedIndex + 1} of ${this.items.length}`;
		const lines = [t.fg("accent", t.bold(this.title)), t.fg("dim", position), ...this.list.render(width), "", ...this.detailLines(width), t.fg("dim", HINT)];
		return lines.map((line) => truncateToWidth(line, Math.max(1, width)));
	}

	/** The selected row's detail, wrapped to at most `DETAIL_ROWS` lines (the last cut with `…`). */
	private detailLines(width: number): string[] {
		if (!this.options.detail) return [];
		const value = this.list.getSelectedItem()?.value;
		const text = value === undefined ? undefined : this.options.detail(value);
		if (!text) return [];
		const wrapped = wrapTextWithAnsi(text, Math.max(10, width));
		if (wrapped.length > DETAIL_ROWS) wrapped[DETAIL_ROWS - 1] = truncateToWidth(`${wrapped[DETAIL_ROWS - 1]} ${wrapped[DETAIL_ROWS]}`, Math.max(10, width));
		return wrapped.slice(0, DETAIL_ROWS);
	}

	handleInput(data: string): void {
		if (matchesKey(data, Key.ctrl("c")) || data === "q") {
			this.options.done(undefined);
			return;
		}
		this.list.handleInput(data);
	}

	invalidate(): void {
		this.list.invalidate();
	}

	private windowRows(): number {
		const own = OWN_ROWS + (this.options.detail ? DETAIL_ROWS : 0);
		return Math.max(3, Math.min(this.items.length, this.options.rows() - RESERVED_ROWS - own));
	}

	private makeList(rows: number): SelectList {
		const t = this.options.theme;
		this.visible = rows;
		const list = new SelectList([...this.items], rows, {
			selectedPrefix: (text) => t.fg("accent", text),
			selectedText: (text) => t.inverse(text),
			description: (text) => t.fg("muted", text),
			scrollInfo: (text) => t.fg("dim", text),
			noMatch: (text) => t.fg("dim", text),
		});
		list.onSelect = (item) => this.options.done(item.value);
		list.onCancel = () => this.options.done(undefined);
		return list;
	}
}
