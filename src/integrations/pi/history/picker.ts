import { type Component, getKeybindings, Key, matchesKey, type SelectItem, SelectList, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { matchParts, printable } from "../../../services/history/query/printable.ts";
import type { ViewerTheme } from "./viewer.ts";

/** Some of a picker's rows: the first page it opens with, or one it loads as the selection moves down. */
export interface PickerPage {
	readonly items: readonly SelectItem[];
	/** How many rows there are in all. */
	readonly total: number;
	/** Where the next page starts, or `null` when this page reaches the end. */
	readonly nextOffset: number | null;
}

/** A row's detail: archived text around a match, which the picker marks and keeps on screen. */
export interface PickerDetail {
	/** Shown first, muted (`match:`). */
	readonly label: string;
	/** Shown on one line (whitespace runs as one space), made printable. */
	readonly text: string;
	/** Where the match is in `text` (UTF-16 offsets). */
	readonly match: { readonly start: number; readonly length: number };
}

export interface PickerOptions {
	/** Terminal rows, read at every render (the terminal may be resized). */
	readonly rows: () => number;
	readonly theme: ViewerTheme;
	/** The chosen item's value, or `undefined` when the person closed the picker. */
	readonly done: (value: string | undefined) => void;
	/** More about the selected row, shown under the list (up to `DETAIL_ROWS` lines): a hit's match in its context. */
	readonly detail?: (value: string) => PickerDetail | undefined;
	/** Loads the page of rows from `offset` (the first page's `nextOffset`, then each next one). Without it, the first page is all. */
	readonly load?: (offset: number) => Promise<PickerPage>;
	/** Ask the TUI to render again (a page arrives after the key that asked for it was handled). */
	readonly redraw?: () => void;
}

/** Terminal rows left to Pi around the picker (its editor, status and footer lines). */
const RESERVED_ROWS = 8;
/** Title, position, the list's scroll line, blank (or a failed load), key hint. */
const OWN_ROWS = 5;
/** Lines of the selected row's detail, when there is one. */
const DETAIL_ROWS = 2;
const HINT = "↑↓ PgUp PgDn Home End move · Enter open · Esc close";

/**
 * A picker that fits the terminal, whatever the number of rows: one line per row (cut to the
 * width), a window of rows that scrolls with the selection (pi-tui's `SelectList`), and the title
 * and "12 of 919" always on screen, so Enter opens the row the person sees selected. (Pi's own
 * `select` shows every row, wrapped: 50 sessions pushed the title and the selection off an 80×24
 * screen.) Rows come a page at a time: the next page is loaded when the selection reaches the
 * last loaded row, so every row can be reached without loading them all up front.
 */
export class HistoryPicker implements Component {
	private list: SelectList;
	private visible = 0;
	private selected = 0;
	private readonly items: SelectItem[];
	private total: number;
	private nextOffset: number | null;
	private loading = false;
	/** A row past the loaded ones that keys typed while a page loaded asked for (see `handleInput`). */
	private wanted: number | undefined;
	/** Enter was typed while `wanted` was still loading: it is opened when it comes. */
	private openWanted = false;
	/** Rows a page brings (the first page's): what End pressed again while one loads moves on by. */
	private readonly pageRows: number;
	private error: string | undefined;

	constructor(
		private readonly title: string,
		first: PickerPage,
		private readonly options: PickerOptions,
	) {
		this.items = [...first.items];
		this.pageRows = Math.max(1, first.items.length);
		this.total = first.total;
		this.nextOffset = options.load ? first.nextOffset : null;
		this.list = this.makeList(this.windowRows());
	}

	/** The selected row's index (for tests and the position line). */
	get selectedIndex(): number {
		return this.selected;
	}

	render(width: number): string[] {
		const t = this.options.theme;
		const rows = this.windowRows();
		if (rows !== this.visible) this.list = this.makeList(rows);
		const lines = [
			t.fg("accent", t.bold(this.title)),
			t.fg("dim", this.position()),
			...this.list.render(width),
			this.error ? t.fg("warning", this.error) : "",
			...this.detailLines(width),
			t.fg("dim", HINT),
		];
		return lines.map((line) => truncateToWidth(line, Math.max(1, width)));
	}

	/** `12 of 919`, and while not every row is here, how many are and whether more are coming. */
	private position(): string {
		const loaded = this.nextOffset === null ? "" : ` · ${this.items.length} loaded`;
		return `${this.selected + 1} of ${this.allRows()}${loaded}${this.loading ? " · loading…" : ""}`;
	}

	/** How many rows there are: the service's count until every row is here, then the rows themselves. */
	private allRows(): number {
		return this.nextOffset === null ? this.items.length : Math.max(this.total, this.items.length);
	}

	/**
	 * The selected row's detail, wrapped to at most `DETAIL_ROWS` lines (the last cut with `…`), its
	 * match always among them: when the text before the match would push it further, that text is
	 * cut (`…`) to a little context. (A CJK run has no spaces and is twice as wide: its match often
	 * fell past the second line.)
	 */
	private detailLines(width: number): string[] {
		const value = this.items[this.selected]?.value;
		const detail = value === undefined ? undefined : this.options.detail?.(value);
		if (!detail) return [];
		const columns = Math.max(10, width);
		const head = `${printable(detail.label.replace(/\s+/g, " "))} `;
		const [before, match, after] = matchParts(detail.text, detail.match);
		const layout = (context: string) => ({ matchAt: head.length + context.length, lines: wrapLines(head + context + match + after, columns) });
		const shows = (l: ReturnType<typeof layout>) => {
			const last = l.lines[l.lines.length - 1];
			return last !== undefined && l.matchAt + match.length <= last.start + last.shown.length;
		};
		let shown = layout(before);
		if (!shows(shown)) {
			// Keep about a quarter of a line before the match, less if the match still would not show.
			const kept = graphemes(before);
			const context = () => `…${kept.join("").trimStart()}`;
			while (kept.length > 0 && visibleWidth(kept.join("")) > columns / 4) kept.shift();
			while (kept.length > 0 && !shows(layout(context()))) kept.shift();
			shown = layout(context());
		}
		const t = this.options.theme;
		const labelEnd = head.length - 1;
		const matchEnd = shown.matchAt + match.length;
		return shown.lines.map(({ start, shown: line, cut }) => {
			const at = (offset: number) => Math.max(0, Math.min(line.length, offset - start));
			const [l, a, b] = [at(labelEnd), at(shown.matchAt), at(matchEnd)];
			const label = line.slice(0, l);
			const marked = line.slice(a, b);
			return `${label ? t.fg("muted", label) : ""}${line.slice(l, a)}${marked ? t.inverse(marked) : ""}${line.slice(b)}${cut ? "…" : ""}`;
		});
	}

	handleInput(data: string): void {
		if (matchesKey(data, Key.ctrl("c")) || data === "q") {
			this.options.done(undefined);
			return;
		}
		// The list's own keys (Pi's keybindings for a select), but paging instead of wrapping while rows
		// are still to come. Keys typed while a page loads count from where they lead, not from the row
		// shown (`wanted`): End, Down, Enter typed fast open row 51, not row 50.
		const kb = getKeybindings();
		const last = this.items.length - 1;
		const wrap = this.nextOffset === null;
		const page = Math.max(1, this.visible);
		const from = this.wanted ?? this.selected;
		let to: number;
		if (kb.matches(data, "tui.select.up")) to = from > 0 ? from - 1 : wrap ? last : 0;
		else if (kb.matches(data, "tui.select.down")) to = from < last || !wrap ? from + 1 : 0;
		else if (kb.matches(data, "tui.select.pageUp")) to = Math.max(0, from - page);
		else if (kb.matches(data, "tui.select.pageDown")) to = from + page;
		else if (matchesKey(data, Key.home)) to = 0;
		// The last loaded row; pressed again while the next page loads, the last row of that page.
		else if (matchesKey(data, Key.end)) to = this.loading || this.wanted !== undefined ? Math.max(from, last) + this.pageRows : last;
		else {
			// Enter typed while the row it means is still loading opens that row once it is here.
			if (this.wanted !== undefined && kb.matches(data, "tui.select.confirm")) this.openWanted = true;
			else this.list.handleInput(data); // Enter opens, Esc closes
			return;
		}
		this.moveTo(to);
	}

	/** Selects row `to`; one past the loaded rows is kept as `wanted` and reached as the next pages come. */
	private moveTo(to: number): void {
		const last = this.items.length - 1;
		if (to > last && this.nextOffset !== null) {
			this.wanted = Math.min(to, this.allRows() - 1);
			this.selected = last;
		} else {
			this.wanted = undefined;
			this.selected = Math.max(0, Math.min(last, to));
		}
		this.list.setSelectedIndex(this.selected);
		// At the last loaded row: the next page comes (the selection stays; the person moves on when it is here).
		if (this.selected === last) void this.loadMore();
	}

	invalidate(): void {
		this.list.invalidate();
	}

	/** Loads the next page, one at a time; a failure is shown in the picker, and the next key at the last row tries again. */
	private async loadMore(): Promise<void> {
		const offset = this.nextOffset;
		const load = this.options.load;
		if (this.loading || offset === null || !load) return;
		this.loading = true;
		this.error = undefined;
		this.options.redraw?.();
		let page: PickerPage | undefined;
		try {
			page = await load(offset);
		} catch (err) {
			this.error = `could not load more rows: ${(err as Error).message}`.replace(/\s+/g, " ");
			// What was typed ahead waits for the next try (a key at the last row).
			this.wanted = undefined;
			this.openWanted = false;
		}
		this.loading = false;
		if (page) {
			this.items.push(...page.items);
			this.total = page.total;
			// An offset that does not move on would load the same page for ever.
			this.nextOffset = page.nextOffset !== null && page.nextOffset > offset ? page.nextOffset : null;
			this.list = this.makeList(this.windowRows());
			// Where the keys typed meanwhile lead (which may load the next page in turn).
			if (this.wanted !== undefined) this.moveTo(this.wanted);
			if (this.wanted === undefined && this.openWanted) {
				this.openWanted = false;
				const value = this.items[this.selected]?.value;
				if (value !== undefined) this.options.done(value);
			}
		}
		this.options.redraw?.();
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
			// The list counts the rows it has, not the rows there are.
			scrollInfo: () => t.fg("dim", `  (${this.selected + 1}/${this.allRows()})`),
			noMatch: (text) => t.fg("dim", text),
		});
		list.setSelectedIndex(this.selected);
		list.onSelect = (item) => this.options.done(item.value);
		list.onCancel = () => this.options.done(undefined);
		return list;
	}
}

/**
 * Plain one-line `text` in up to `DETAIL_ROWS` lines of `width` columns, each with where it starts
 * in `text`: broken at spaces, and inside a word too long for a line, which fills the line it starts
 * on first (a CJK run has no spaces: pi-tui's wrap moves it whole to a new line, leaving `match:`
 * alone on the first). The last line runs on to the width and is cut (`cut`: a `…` follows) when
 * more would follow.
 */
function wrapLines(text: string, width: number): { start: number; shown: string; cut: boolean }[] {
	const lines: { start: number; shown: string; cut: boolean }[] = [];
	let start = 0;
	let end = 0; // where the line's text ends (spaces at a break are dropped)
	let used = 0;
	const breakAt = (next: number) => {
		lines.push({ start, shown: text.slice(start, end), cut: false });
		[start, end, used] = [next, next, 0];
	};
	for (const { 0: token, index: at } of text.matchAll(/ +|[^ ]+/g)) {
		const columns = visibleWidth(token);
		if (token.startsWith(" ")) {
			if (used === 0) [start, end] = [at + token.length, at + token.length];
			else used += columns;
		} else if (used + columns <= width || (used > 0 && columns <= width)) {
			if (used + columns > width) breakAt(at);
			used += columns;
			end = at + token.length;
		} else {
			let offset = at;
			for (const g of graphemes(token)) {
				if (used + visibleWidth(g) > width && used > 0) breakAt(offset);
				used += visibleWidth(g);
				end = offset += g.length;
			}
		}
	}
	if (end > start) breakAt(end);
	if (lines.length <= DETAIL_ROWS) return lines;
	const last = lines[DETAIL_ROWS - 1] as { start: number };
	return [...lines.slice(0, DETAIL_ROWS - 1), { start: last.start, shown: leading(text.slice(last.start), width - 1), cut: true }];
}

/** The longest start of `text` (whole graphemes) that fits in `columns`. */
function leading(text: string, columns: number): string {
	let out = "";
	let used = 0;
	for (const g of graphemes(text)) {
		used += visibleWidth(g);
		if (used > columns) break;
		out += g;
	}
	return out;
}

/** One segmenter for every render (making one is the costly part; a key repaints the detail). */
let segmenter: Intl.Segmenter | undefined;

function graphemes(text: string): string[] {
	segmenter ??= new Intl.Segmenter();
	return Array.from(segmenter.segment(text), (s) => s.segment);
}
