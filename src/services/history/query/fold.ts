/**
 * Case folding for search: Unicode-aware, with a way back to the original text.
 *
 * The fold is JavaScript's own `toLowerCase` (the default, locale-independent Unicode mapping),
 * applied so that it is the same for every code point wherever it stands, plus one step of real
 * case folding: final sigma `ς` becomes `σ`, so `ΟΔΟΣ`, `οδος` and `οδοσ` all match each other.
 * What it does and does not do, on purpose:
 * - `ÄÖ` and `äö` match; `İ` (U+0130) lowercases to two code units, `i̇` (i + U+0307), so a
 *   query `i̇` finds it and a query `İ` folds to the same two units;
 * - full-width letters fold as `toLowerCase` folds them, to full-width: `Ａ` matches `ａ`, not `a`
 *   (no NFKC compatibility mapping; the text is matched as written, only its case ignored);
 * - no other full case folding: `ß` does not match `ss`, accents are not stripped;
 * - CJK, emoji and anything without case are unchanged.
 */

/** A text in folded form, and how to get from folded offsets back to the original's. */
export interface FoldedText {
	readonly folded: string;
	/**
	 * The letters whose folded form has another length than the original, as quadruples
	 * `[foldedStart, foldedEnd, originalStart, originalEnd]`, in order. Absent when there are none
	 * (the usual case: then folded offset = original offset). Memory is spent per such letter, not
	 * per character, so a long text with one `İ` costs four numbers.
	 */
	readonly expansions?: Uint32Array;
}

const FINAL_SIGMA = /ς/g;
/** Texts that change length are lowercased in blocks of about this many code units. */
const BLOCK = 256;
/** U+0130 `İ`, the only letter whose lowercase is longer (Node 20's Unicode data). */
const KNOWN_GROWING = /\u0130/g;

/**
 * Folds a text. Fast path: when `toLowerCase` keeps the length, every code point kept its length
 * (in the Unicode data of Node 20 no lowercase mapping shrinks, and the only one that grows is
 * U+0130 — a test checks this over every code point), so offsets are unchanged. Otherwise the
 * text is lowercased block by block, and a block whose length changed is halved until the letters
 * that grew are isolated, to record where the expansions are. (Lowercasing per block or per code
 * point differs from the whole string only in final sigma, which is folded to σ anyway.)
 */
export function foldText(text: string): FoldedText {
	const lower = text.toLowerCase();
	if (lower.length === text.length) return { folded: lower.replace(FINAL_SIGMA, "σ") };
	const pieces: string[] = [];
	const expansions: number[] = [];
	let foldedLength = 0;
	// Lowercases text[from, to): kept whole when its length does not change, else halved until
	// the letters that change length are found (a few native calls instead of one per letter).
	const fold = (from: number, to: number) => {
		const part = text.slice(from, to);
		const lowered = part.toLowerCase();
		if (lowered.length === part.length) {
			pieces.push(lowered);
			foldedLength += lowered.length;
			return;
		}
		const cp = text.codePointAt(from) as number;
		const width = cp > 0xffff ? 2 : 1;
		if (to - from <= width) {
			expansions.push(foldedLength, foldedLength + lowered.length, from, to);
			pieces.push(lowered);
			foldedLength += lowered.length;
			return;
		}
		let mid = from + ((to - from) >> 1);
		// Never cut a surrogate pair (both halves stay non-empty: a pair at `from` means to - from > 2).
		if (isLowSurrogate(text.charCodeAt(mid)) && isHighSurrogate(text.charCodeAt(mid - 1))) mid = mid - 1 > from ? mid - 1 : mid + 1;
		fold(from, mid);
		fold(mid, to);
	};
	const foldRange = (from: number, to: number) => {
		for (let i = from; i < to; ) {
			let end = Math.min(to, i + BLOCK);
			if (end < to && isLowSurrogate(text.charCodeAt(end))) end++;
			fold(i, end);
			i = end;
		}
	};
	// The one letter known to grow is cut out directly; `fold` finds any other by halving.
	let done = 0;
	for (const m of text.matchAll(KNOWN_GROWING)) {
		foldRange(done, m.index);
		fold(m.index, m.index + 1);
		done = m.index + 1;
	}
	foldRange(done, text.length);
	return { folded: pieces.join("").replace(FINAL_SIGMA, "σ"), expansions: Uint32Array.from(expansions) };
}

function isHighSurrogate(unit: number): boolean {
	return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
	return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Folds a query the same way as the texts it is matched against. */
export function foldQuery(query: string): string {
	return foldText(query).folded;
}

/** The original offset of the code point a folded unit came from. */
function toOriginal(folded: FoldedText, at: number): number {
	const x = folded.expansions;
	if (!x || x.length === 0) return at;
	// Binary search for the last expansion starting at or before `at`.
	let lo = 0;
	let hi = x.length / 4 - 1;
	let found = -1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		if ((x[mid * 4] as number) <= at) {
			found = mid;
			lo = mid + 1;
		} else hi = mid - 1;
	}
	if (found < 0) return at;
	const foldedEnd = x[found * 4 + 1] as number;
	const originalStart = x[found * 4 + 2] as number;
	const originalEnd = x[found * 4 + 3] as number;
	// Inside the expansion: its letter. After it: the same distance past the letter's end.
	return at < foldedEnd ? originalStart : originalEnd + (at - foldedEnd);
}

/**
 * The original UTF-16 range of a folded range `[start, start + length)`. The end is the end of the
 * original code point that produced the last folded unit, so a match on part of an expansion
 * (`i` of `İ`'s `i̇`) covers the whole original letter and never ends inside a surrogate pair.
 */
export function originalRange(text: string, folded: FoldedText, start: number, length: number): { start: number; end: number } {
	if (!folded.expansions || folded.expansions.length === 0) return { start, end: start + length };
	const from = toOriginal(folded, start);
	if (length === 0) return { start: from, end: from };
	const lastFrom = toOriginal(folded, start + length - 1);
	const cp = text.codePointAt(lastFrom);
	return { start: from, end: Math.min(text.length, lastFrom + (cp !== undefined && cp > 0xffff ? 2 : 1)) };
}
