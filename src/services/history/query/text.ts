/** Text helpers for query answers: snippets, one-line previews, safe slices, times. */

/** Characters of context on each side of a match in a snippet. */
export const SNIPPET_CONTEXT = 80;
/** Length of a one-line preview (parents, children, titles). */
export const PREVIEW_LENGTH = 100;
const ELLIPSIS = "…";

/** Made on first use: building a segmenter costs ~15 ms, which a query that never needs one should not pay. */
let graphemes: Intl.Segmenter | undefined;

/** Splits into user-perceived characters (an emoji with its skin tone or ZWJ family is one). */
function segments(text: string): string[] {
	graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
	return Array.from(graphemes.segment(text), (s) => s.segment);
}

/** A snippet and where the match sits in it. */
export interface Snippet {
	readonly text: string;
	readonly match: { readonly start: number; readonly length: number };
}

/**
 * About `context` characters on each side of `text[start, end)`, cut on grapheme boundaries (never
 * inside a surrogate pair or an emoji sequence), with `…` where text was cut. Original characters
 * are kept as they are, line breaks included.
 */
export function snippetAround(text: string, start: number, end: number, context = SNIPPET_CONTEXT): Snippet {
	const left = graphemesBefore(text, start, context);
	const right = graphemesAfter(text, end, context);
	const before = (left.cut ? ELLIPSIS : "") + left.text;
	const matched = text.slice(start, end);
	return { text: before + matched + right.text + (right.cut ? ELLIPSIS : ""), match: { start: before.length, length: matched.length } };
}

// Both look at a window of the text wide enough for `count` graphemes of ordinary text and widen
// it while it holds too few (emoji sequences are up to a dozen units each). A window edge inside
// the text may split a grapheme, so the outermost segment of such a window is never used.
//
// Fast path (same result, no segmenter): a window of only characters that are each one grapheme
// on their own and never join a neighbour — printable ASCII, tab and newline (not CR, which joins
// LF), Latin-1 and Latin Extended letters, general punctuation, CJK ideographs, kana and Hangul
// syllables (no combining marks, jamo, surrogates, emoji, joiners) — is segmented by counting units.
const SIMPLE = /^[\t\n\x20-\x7e\u00a0-\u02ff\u2010-\u2027\u2030-\u205e\u3000-\u3029\u3030-\u3098\u309b-\u30ff\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff9d]*$/;
// The same plus symbols and emoji standing alone — letterlike symbols, arrows, technical symbols,
// dingbats (U+2100–27BF: ✓ → ❌), mathematical letters (U+1D400–1D7FF: 𝒜), emoji (U+1F000–1FBFF
// but regional indicators U+1F1E6–1F1FF, which pair, and skin tones U+1F3FB–1F3FF, which extend):
// with no joiner, variation selector or mark in the window, each is one grapheme, so code points
// are counted instead of units.
const SIMPLE_OR_EMOJI =
	/^(?:[\t\n\x20-\x7e\u00a0-\u02ff\u2010-\u2027\u2030-\u205e\u2100-\u27bf\u3000-\u3029\u3030-\u3098\u309b-\u30ff\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff9d]|\ud835[\udc00-\udfff]|\ud83c[\udc00-\udde5\ude00-\udffa]|[\ud83d\ud83e][\udc00-\udfff])*$/;

function graphemesBefore(text: string, at: number, count: number): { text: string; cut: boolean } {
	const window = count * 4;
	const start = Math.max(0, at - window);
	const slice = text.slice(start, at);
	if (SIMPLE.test(slice)) {
		// As below with every unit a grapheme: the first unit of a window that starts inside the text is dropped.
		const units = start > 0 ? at - start - 1 : at - start;
		return { text: text.slice(Math.max(start, at - count), at), cut: start > 0 || units > count };
	}
	if (SIMPLE_OR_EMOJI.test(slice)) {
		// Every code point a grapheme: as below, counting code points. The window holds at least
		// 2 × count of them, so the last `count` never reach its first (dropped) one.
		const parts = slice.length - pairsIn(slice) - (start > 0 ? 1 : 0);
		let from = at;
		for (let n = 0; n < count && from > start; n++) from -= isLow(text.charCodeAt(from - 1)) ? 2 : 1;
		return { text: text.slice(from, at), cut: start > 0 || parts > count };
	}
	for (let reach = window; ; reach *= 2) {
		const from = Math.max(0, at - reach);
		let parts = segments(text.slice(from, at));
		if (from > 0) parts = parts.slice(1);
		if (parts.length >= count || from === 0) return { text: parts.slice(-count).join(""), cut: from > 0 || parts.length > count };
	}
}

function graphemesAfter(text: string, at: number, count: number): { text: string; cut: boolean } {
	const window = count * 4;
	const end = Math.min(text.length, at + window);
	const slice = text.slice(at, end);
	if (SIMPLE.test(slice)) {
		const units = end < text.length ? end - at - 1 : end - at;
		return { text: text.slice(at, at + Math.min(count, units)), cut: end < text.length || units > count };
	}
	if (SIMPLE_OR_EMOJI.test(slice)) {
		const parts = slice.length - pairsIn(slice) - (end < text.length ? 1 : 0);
		let to = at;
		for (let n = 0; n < Math.min(count, parts); n++) to += isHigh(text.charCodeAt(to)) ? 2 : 1;
		return { text: text.slice(at, to), cut: end < text.length || parts > count };
	}
	for (let reach = window; ; reach *= 2) {
		const to = Math.min(text.length, at + reach);
		let parts = segments(text.slice(at, to));
		if (to < text.length) parts = parts.slice(0, -1);
		if (parts.length >= count || to === text.length) return { text: parts.slice(0, count).join(""), cut: to < text.length || parts.length > count };
	}
}

/** Surrogate pairs in a well-formed text. */
function pairsIn(text: string): number {
	let n = 0;
	for (let i = 0; i < text.length; i++) if (isHigh(text.charCodeAt(i))) n++;
	return n;
}

/** One line of at most `max` characters (whitespace runs become one space), cut on a grapheme. */
export function oneLine(text: string, max = PREVIEW_LENGTH): string {
	const flat = text.replace(/\s+/g, " ").trim();
	if (flat.length <= max) return flat;
	// Every unit its own grapheme (see `SIMPLE`): cut by units, as the segmenter would.
	if (SIMPLE.test(flat.slice(0, max + 1))) return flat.slice(0, max - 1).trimEnd() + ELLIPSIS;
	const out: string[] = [];
	let length = 0;
	for (const g of segments(flat.slice(0, max + 16))) {
		if (length + g.length > max - 1) break;
		out.push(g);
		length += g.length;
	}
	return out.join("").trimEnd() + ELLIPSIS;
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * `text[offset, offset + limit)` in UTF-16 code units without splitting a surrogate pair:
 * - if the start falls on the low half of a pair, the slice starts one unit earlier, so the
 *   character is shown whole rather than as half a character;
 * - if the end falls between the halves of a pair, the slice ends one unit earlier and the
 *   character starts the next slice (`end` is the next offset);
 * - but a slice never comes back empty while text remains (a limit of 1 on a pair): then it ends
 *   after the pair, one unit over the limit, so paging always moves forward.
 * Slices taken with each `end` as the next offset concatenate to the whole text.
 */
export function sliceUtf16(text: string, offset: number, limit: number): { text: string; start: number; end: number } {
	let start = Math.min(offset, text.length);
	if (start > 0 && start < text.length && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start--;
	let end = Math.min(text.length, start + limit);
	if (end > start && end < text.length && isLow(text.charCodeAt(end)) && isHigh(text.charCodeAt(end - 1))) {
		end = end - 1 > start ? end - 1 : end + 1;
	}
	return { text: text.slice(start, end), start, end };
}

/** `2026-03-01 09:00` (UTC, minute precision): how bodies and listings show times. */
export function formatTime(iso: string): string {
	const ms = Date.parse(iso);
	if (Number.isNaN(ms)) return iso;
	return new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

/** `2026-03-01 09:00 – 09:05`, or with both dates when the range spans days. */
export function formatRange(startIso: string, endIso: string): string {
	const a = formatTime(startIso);
	const b = formatTime(endIso);
	if (a === b) return a;
	return a.slice(0, 10) === b.slice(0, 10) ? `${a} – ${b.slice(11)}` : `${a} – ${b}`;
}

/** Epoch ms of an ISO time; unreadable times sort as 0 (never thrown on: archives are data). */
export function timeMs(iso: string): number {
	const ms = Date.parse(iso);
	return Number.isNaN(ms) ? 0 : ms;
}
