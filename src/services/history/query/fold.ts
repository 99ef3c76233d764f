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
	 * For each UTF-16 unit of `folded`, the offset in the original where the code point it came
	 * from starts. Absent when folding kept every offset (the usual case: then folded offset =
	 * original offset), so memory is spent only on texts that contain a length-changing letter.
	 */
	readonly map?: Uint32Array;
}

const FINAL_SIGMA = /ς/g;

/**
 * Folds a text. Fast path: when `toLowerCase` keeps the length, every code point kept its length
 * (in the Unicode data of Node 20 no lowercase mapping shrinks, and the only one that grows is
 * U+0130 — a test checks this over every code point), so offsets are unchanged. Otherwise the
 * text is folded code point by code point with a map.
 */
export function foldText(text: string): FoldedText {
	const lower = text.toLowerCase();
	if (lower.length === text.length) return { folded: lower.replace(FINAL_SIGMA, "σ") };
	const units: string[] = [];
	const map: number[] = [];
	for (let i = 0; i < text.length; ) {
		const cp = text.codePointAt(i) as number;
		const width = cp > 0xffff ? 2 : 1;
		const piece = String.fromCodePoint(cp).toLowerCase().replace(FINAL_SIGMA, "σ");
		units.push(piece);
		for (let k = 0; k < piece.length; k++) map.push(i);
		i += width;
	}
	return { folded: units.join(""), map: Uint32Array.from(map) };
}

/** Folds a query the same way as the texts it is matched against. */
export function foldQuery(query: string): string {
	return foldText(query).folded;
}

/**
 * The original UTF-16 range of a folded range `[start, start + length)`. The end is the end of the
 * original code point that produced the last folded unit, so a match on part of an expansion
 * (`i` of `İ`'s `i̇`) covers the whole original letter and never ends inside a surrogate pair.
 */
export function originalRange(text: string, folded: FoldedText, start: number, length: number): { start: number; end: number } {
	if (!folded.map) return { start, end: start + length };
	const map = folded.map;
	const from = map[start] ?? text.length;
	if (length === 0) return { start: from, end: from };
	const lastFrom = map[start + length - 1] ?? text.length;
	const cp = text.codePointAt(lastFrom);
	return { start: from, end: Math.min(text.length, lastFrom + (cp !== undefined && cp > 0xffff ? 2 : 1)) };
}
