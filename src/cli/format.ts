/**
 * Small helpers for output a person reads in a terminal: aligned tables, and the widths text takes
 * on screen, to fit a terminal of a given width (`columns`): tables that pick the columns that fit
 * and cut their free text with `…`, paragraphs wrapped at spaces.
 *
 * Widths are counted here rather than with pi-tui's `visibleWidth`: pi-tui is an ES module package
 * (the code-cached CommonJS script the queries run from cannot `require` it on Node 20) whose entry
 * loads its components and makes an `Intl.Segmenter` (≈ 15 ms) when it loads. Code points are
 * grouped into clusters instead (a base and the marks, joiners, variation selectors and skin tones
 * that follow it): East Asian Wide and Fullwidth characters and emoji take 2 columns, combining
 * marks and format characters 0, ANSI colour escapes none.
 */

/** Pads cells into aligned columns; numbers are right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
	const cells = [header, ...rows].map((row) => row.map((c) => String(c)));
	const widths = header.map((_, i) => Math.max(...cells.map((r) => displayWidth(r[i] ?? ""))));
	const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"));
	return cells
		.map((row) =>
			row
				.map((cell, i) => {
					const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - displayWidth(cell)));
					return numeric[i] ? pad + cell : cell + pad;
				})
				.join("  ")
				.trimEnd(),
		)
		.join("\n");
}

/** A column of a table that may be fitted to a width (`columnsTable`). */
export interface Column {
	readonly header: string;
	readonly cells: readonly (string | number)[];
	/**
	 * Free text (a title, a preview): cut with `…` to the width the other columns leave. A layout
	 * with it fits only when that width is at least `min` (or the column's own width, if less).
	 */
	readonly free?: { readonly min: number };
}

const GAP = 2;

function columnWidth(column: Column): number {
	let width = displayWidth(column.header);
	for (const cell of column.cells) width = Math.max(width, displayWidth(String(cell)));
	return width;
}

/** The width of a table's lines without its free column (whose gap is counted). */
function fixedWidth(columns: readonly Column[]): number {
	let width = GAP * Math.max(0, columns.length - 1);
	for (const column of columns) if (!column.free) width += columnWidth(column);
	return width;
}

/** Whether a table of these columns fits in `width` (its free column, if any, at least as wide as it needs). */
function fits(columns: readonly Column[], width: number): boolean {
	const free = columns.find((c) => c.free);
	const need = free?.free ? Math.min(free.free.min, columnWidth(free)) : 0;
	return fixedWidth(columns) + need <= width;
}

/** Index of the first layout that fits in `width` (see `fits`); the last when none does. */
export function fittingLayout(layouts: readonly (readonly Column[])[], width: number): number {
	const at = layouts.findIndex((columns) => fits(columns, width));
	return at < 0 ? layouts.length - 1 : at;
}

/**
 * The columns as a `table`; with a `width`, the free column's text (header included) is cut with
 * `…` to the width the other columns leave. Without one, every cell is whole.
 */
export function columnsTable(columns: readonly Column[], width?: number): string {
	let cut = columns;
	if (width !== undefined) {
		const room = Math.max(0, width - fixedWidth(columns));
		cut = columns.map((c) => (c.free ? { header: truncateToWidth(c.header, room), cells: c.cells.map((cell) => truncateToWidth(String(cell), room)) } : c));
	}
	const rows = cut[0]?.cells.map((_, r) => cut.map((c) => c.cells[r] ?? "")) ?? [];
	return table(
		cut.map((c) => c.header),
		rows,
	);
}

// ---------------------------------------------------------------------------------------------
// Widths

/** ANSI CSI sequences (the highlight's colours): they take no room on screen. */
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Marks (combining, enclosing, spacing), format characters (joiners, soft hyphen, tags), Hangul jamo that join a syllable. */
const JOINS = /^[\p{M}\p{Cf}\u1160-\u11ff\ud7b0-\ud7ff]$/u;
/** East Asian Wide and Fullwidth blocks, and characters shown as emoji by default. */
const WIDE =
	/^(?:[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{18dff}\u{1b000}-\u{1b2ff}\u{1f200}-\u{1f2ff}\u{20000}-\u{3fffd}]|\p{Emoji_Presentation})$/u;
const ZWJ = 0x200d;
const VS16 = 0xfe0f;

function isRegionalIndicator(code: number): boolean {
	return code >= 0x1f1e6 && code <= 0x1f1ff;
}

function isSkinTone(code: number): boolean {
	return code >= 0x1f3fb && code <= 0x1f3ff;
}

/** Columns a cluster's first code point takes. */
function baseWidth(ch: string, code: number): number {
	if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
	if (code < 0x7f) return 1;
	if (JOINS.test(ch)) return 0;
	if (isRegionalIndicator(code)) return 2;
	return WIDE.test(ch) ? 2 : 1;
}

/** A cluster of code points a terminal shows as one character, and its width. */
interface Cluster {
	text: string;
	width: number;
}

/**
 * The text's clusters: a base code point with the marks, variation selectors, skin tones, format
 * characters and joined code points (after a ZWJ) that follow it; two regional indicators (a flag).
 * Close enough to grapheme clusters for widths, without a segmenter (≈ 15 ms to make).
 */
function clusters(text: string): Cluster[] {
	const out: Cluster[] = [];
	let last: Cluster | undefined;
	let joinNext = false;
	let lastRegional = false;
	for (const ch of text) {
		const code = ch.codePointAt(0) ?? 0;
		const joins =
			last !== undefined &&
			code >= 0x20 &&
			(joinNext || (code > 0x7f && (JOINS.test(ch) || (isSkinTone(code) && last.width === 2) || (isRegionalIndicator(code) && lastRegional))));
		if (joins && last) {
			last.text += ch;
			// An emoji variation selector shows a text-default symbol (❤) as a wide emoji.
			if (code === VS16 && last.width === 1) last.width = 2;
			lastRegional = false;
		} else {
			last = { text: ch, width: baseWidth(ch, code) };
			out.push(last);
			lastRegional = isRegionalIndicator(code);
		}
		joinNext = code === ZWJ;
	}
	return out;
}

/** Terminal columns a string takes: wide (CJK, emoji) characters count two, combining marks none, colour escapes none. */
export function displayWidth(text: string): number {
	const plain = text.includes("\x1b") ? text.replace(CSI, "") : text;
	if (PRINTABLE_ASCII.test(plain)) return plain.length;
	let width = 0;
	for (const c of clusters(plain)) width += c.width;
	return width;
}

const ELLIPSIS = "…";

/** The start of `text` that fits in `max` columns, with `…` where it was cut (plain text: no escapes). */
export function truncateToWidth(text: string, max: number): string {
	if (displayWidth(text) <= max) return text;
	if (max <= 0) return "";
	let out = "";
	let width = 0;
	for (const c of clusters(text)) {
		if (width + c.width > max - 1) break;
		out += c.text;
		width += c.width;
	}
	return out.trimEnd() + ELLIPSIS;
}

/** The end of `text` that fits in `max` columns, with `…` before it where it was cut (plain text). */
export function tailToWidth(text: string, max: number): string {
	if (displayWidth(text) <= max) return text;
	if (max <= 0) return "";
	const parts = clusters(text);
	let out = "";
	let width = 0;
	for (let i = parts.length - 1; i >= 0; i--) {
		const c = parts[i] as Cluster;
		if (width + c.width > max - 1) break;
		out = c.text + out;
		width += c.width;
	}
	return ELLIPSIS + out.trimStart();
}

function hasWide(text: string): boolean {
	return !PRINTABLE_ASCII.test(text) && clusters(text).some((c) => c.width === 2);
}

/** Tabs as the spaces to the next tab stop (every 8 columns): wrapping counts what a terminal shows. */
function expandTabs(line: string): string {
	if (!line.includes("\t")) return line;
	let out = "";
	let width = 0;
	for (const part of line.split(/(\t)/)) {
		if (part === "\t") {
			const pad = 8 - (width % 8);
			out += " ".repeat(pad);
			width += pad;
		} else {
			out += part;
			width += displayWidth(part);
		}
	}
	return out;
}

/**
 * One line of plain text wrapped at `width` columns: at spaces, a word wider than a line (a long
 * path, a run of CJK text, which has no spaces) broken between its characters; a word with wide
 * characters also fills the rest of a line rather than moving to the next. Continuation lines
 * start with `continuation`, by default the line's own indent (and two more columns after a list
 * bullet), dropped when it would leave less than half the width.
 */
export function wrapLine(line: string, width: number, continuation?: string): string[] {
	const text = expandTabs(line).trimEnd();
	if (displayWidth(text) <= width) return [text];
	const indent = /^ */.exec(text)?.[0] ?? "";
	let hang = continuation ?? (/^ *[-*+] /.test(text) ? `${indent}  ` : indent);
	if (displayWidth(hang) > width / 2) hang = "";
	const lines: string[] = [];
	let current = indent;
	let currentWidth = indent.length;
	/** Whether `current` holds a word (not only an indent). */
	let holdsWord = false;
	const newLine = () => {
		lines.push(current.trimEnd());
		current = hang;
		currentWidth = hang.length;
		holdsWord = false;
	};
	// Words and the spaces between them; spaces at a break are dropped.
	for (const token of text.slice(indent.length).split(/( +)/)) {
		if (token === "") continue;
		const tokenWidth = displayWidth(token);
		if (token.startsWith(" ")) {
			if (currentWidth + tokenWidth < width) {
				current += token;
				currentWidth += tokenWidth;
			} else newLine();
			continue;
		}
		if (currentWidth + tokenWidth <= width) {
			current += token;
			currentWidth += tokenWidth;
			holdsWord = true;
			continue;
		}
		// A word that fits a line is never broken (an id, a path): on a line of its own, without the
		// continuation's indent if it needs the room.
		if (tokenWidth <= width && !hasWide(token)) {
			if (holdsWord) newLine();
			if (currentWidth + tokenWidth > width) current = "";
			current += token;
			currentWidth = displayWidth(current);
			holdsWord = true;
			continue;
		}
		// Broken between its characters: as much as fits on this line, then on the next ones.
		for (const c of clusters(token)) {
			if (currentWidth + c.width > width && (holdsWord || currentWidth > hang.length)) newLine();
			current += c.text;
			currentWidth += c.width;
			holdsWord = true;
		}
	}
	if (current.trim() !== "") lines.push(current.trimEnd());
	return lines;
}

/** Every line of `text` wrapped at `width` (`wrapLine`, with its `continuation`); as it is without a width. */
export function wrapText(text: string, width: number | undefined, continuation?: string): string {
	if (width === undefined) return text;
	return text
		.split("\n")
		.flatMap((line) => wrapLine(line, width, continuation))
		.join("\n");
}

export { printable } from "../services/history/query/printable.ts";
