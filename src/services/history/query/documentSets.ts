/**
 * Sets of document numbers as the n-gram index combines them: ascending `Int32Array`s, built from
 * posting lists. A union of many lists (a word's variants, a junction's) goes through a bitmap when
 * it is large — one bit per document, no sort — and through a sort when it is small, so a union of
 * a few rare lists never touches a bitmap the size of the whole index.
 */
import type { PostingLists } from "./postingLists.ts";

const EMPTY = new Int32Array(0);

/** A large set as a bitmap: bit `doc & 31` of word `doc >> 5`. */
export interface DocumentBits {
	readonly bits: Int32Array;
}

/**
 * The documents of any of the lists, ascending, once each (`size`: above every document number);
 * as a bitmap when it was built as one (ranking walks it word by word).
 */
export function unionOf(lists: PostingLists, ids: readonly number[], size: number): Int32Array | DocumentBits {
	if (ids.length === 0) return EMPTY;
	if (ids.length === 1) return lists.documents(ids[0] as number);
	let postings = 0;
	for (const id of ids) postings += lists.frequency(id);
	// A sort costs ~log n per posting, a bitmap a pass over size/32 words: sort while it is the smaller.
	if (postings * 64 < size) {
		const all = new Int32Array(postings);
		let n = 0;
		for (const id of ids) {
			const docs = lists.documents(id);
			all.set(docs, n);
			n += docs.length;
		}
		all.sort();
		let k = 0;
		for (let i = 0; i < n; i++) if (i === 0 || all[i] !== all[i - 1]) all[k++] = all[i] as number;
		return all.subarray(0, k);
	}
	const bits = new Int32Array((size + 31) >>> 5);
	for (const id of ids) lists.mark(id, bits);
	return { bits };
}

/** The documents whose bits are set, ascending. */
export function fromBits(bits: Int32Array): Int32Array {
	let n = 0;
	for (let w = 0; w < bits.length; w++) n += popcount(bits[w] as number);
	const out = new Int32Array(n);
	let k = 0;
	for (let w = 0; w < bits.length; w++) {
		let word = bits[w] as number;
		while (word !== 0) {
			const low = word & -word;
			out[k++] = (w << 5) | (31 - Math.clz32(low));
			word ^= low;
		}
	}
	return out;
}

function popcount(x: number): number {
	x -= (x >>> 1) & 0x55555555;
	x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
	x = (x + (x >>> 4)) & 0x0f0f0f0f;
	return Math.imul(x, 0x01010101) >>> 24;
}
