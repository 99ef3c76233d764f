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
 * - canonical equivalence (NFC): `é` typed as one code point and as `e` + U+0301 match, as do
 *   Hangul syllables and their conjoining jamo;
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

/** Final sigma (ς, U+03C2), folded as σ. Escaped: the CLI's code-cached script is ASCII only (`scripts/bundle-cli.mjs`). */
const FINAL_SIGMA = /\u03c2/g;
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
	// Most texts hold nothing canonical composition could change (checked for cheaply, then for sure).
	if (MAY_COMPOSE.test(text) && text.normalize("NFC") !== text) return foldComposing(text);
	return foldCase(text);
}

/**
 * A code unit at or above U+0300: the only kind near which NFC may change a text. Every code point
 * below it is its own NFC form, with a canonical combining class of 0, and none composes with
 * another (a test checks each one and each pair), so a text without one is already NFC.
 * One plain range in front of `normalize` (which costs as much as `toLowerCase`): on the bench's
 * 80 MB of texts, this and `normalize` where it matched took 87 ms, against 203 ms for the
 * earlier class of every script's combining marks (a binary search per character).
 */
const MAY_COMPOSE = /[\u0300-\uffff]/;

/**
 * What canonical composition works on: a base character and the marks after it, a run of jamo,
 * a Hangul syllable and a trailing jamo, or a singleton. Composed alone, each gives what composing
 * the whole text gives (composition does not reach across a base character).
 */
const COMPOSING =
	/\P{M}?\p{M}+|[\u1100-\u1112][\u1161-\u1175][\u11a8-\u11c2]?|[\uac00-\ud7a3][\u11a8-\u11c2]|[\u0340\u0341\u0343\u0344\u0374\u037e\u0387\u1f71\u1f73\u1f75\u1f77\u1f79\u1f7b\u1f7d\u1fbb\u1fbe\u1fc9\u1fcb\u1fd3\u1fdb\u1fe3\u1feb\u1fee\u1fef\u1ff9\u1ffb\u1ffd\u2000\u2001\u2126\u212a\u212b\u2329\u232a\uf900-\ufaff]|[\u{2f800}-\u{2fa1d}]/gu;

/**
 * A text that NFC changes: the stretches between composing clusters are folded as usual
 * (`foldCase`), each cluster is composed and lowercased alone, and every cluster or letter whose
 * folded length differs from its original's is recorded as an expansion (which may shrink:
 * `e` + U+0301 → `é`).
 */
function foldComposing(text: string): FoldedText {
	const pieces: string[] = [];
	const expansions: number[] = [];
	let foldedLength = 0;
	let done = 0;
	const plain = (from: number, to: number) => {
		if (to <= from) return;
		const part = foldCase(text.slice(from, to));
		const x = part.expansions;
		if (x)
			for (let i = 0; i < x.length; i += 4)
				expansions.push((x[i] as number) + foldedLength, (x[i + 1] as number) + foldedLength, (x[i + 2] as number) + from, (x[i + 3] as number) + from);
		pieces.push(part.folded);
		foldedLength += part.folded.length;
	};
	for (const m of text.matchAll(COMPOSING)) {
		plain(done, m.index);
		const cluster = m[0];
		const folded = cluster.normalize("NFC").toLowerCase().replace(FINAL_SIGMA, "σ");
		if (folded.length !== cluster.length) expansions.push(foldedLength, foldedLength + folded.length, m.index, m.index + cluster.length);
		pieces.push(folded);
		foldedLength += folded.length;
		done = m.index + cluster.length;
	}
	plain(done, text.length);
	return { folded: pieces.join(""), ...(expansions.length > 0 ? { expansions: Uint32Array.from(expansions) } : {}) };
}

/** Case folding alone (see the module's comment), for a text NFC leaves as it is. */
function foldCase(text: string): FoldedText {
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

/** The original offset of the code point a folded unit came from, and (when inside an expansion) where that expansion's original ends. */
function toOriginal(folded: FoldedText, at: number): number {
	return locate(folded, at).start;
}

function locate(folded: FoldedText, at: number): { start: number; expansionEnd?: number } {
	const x = folded.expansions;
	if (!x || x.length === 0) return { start: at };
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
	if (found < 0) return { start: at };
	const foldedEnd = x[found * 4 + 1] as number;
	const originalStart = x[found * 4 + 2] as number;
	const originalEnd = x[found * 4 + 3] as number;
	// Inside the expansion: its letter. After it: the same distance past the letter's end.
	return at < foldedEnd ? { start: originalStart, expansionEnd: originalEnd } : { start: originalEnd + (at - foldedEnd) };
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
	const last = locate(folded, start + length - 1);
	// Inside an expansion: to its end (a composed `é` ends after the mark it was made from).
	if (last.expansionEnd !== undefined) return { start: from, end: last.expansionEnd };
	const cp = text.codePointAt(last.start);
	return { start: from, end: Math.min(text.length, last.start + (cp !== undefined && cp > 0xffff ? 2 : 1)) };
}
