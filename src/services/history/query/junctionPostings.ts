/**
 * Junction postings of the search index: where one word ends and the next begins. For every place
 * in a document's folded text where a token (a maximal run of `a–z`, `0–9`, `_`) is followed by a
 * short run of whitespace (1–3 units: a space, `\n\n`) and then another token,
 * the document is listed under a key made of the first token's last three units, the separator and
 * the second token's first three units (a token shorter than three units is taken whole, marked as
 * such). Keys are hashed into a fixed number of buckets, one posting list per bucket used.
 *
 * What they are for: a phrase of common words (`the user`, `IS ITS HOW`). Each of its words is in
 * most documents, so its trigrams leave a large share of the index as candidates, each of which must
 * be read; the junctions between its words are what is rare. A phrase's junction — its left word's
 * end (the whole word when the phrase has more before it), its separator, its right word's start —
 * is found under one key, or a few when an edge word of the phrase is short (`do` at the phrase's
 * end may be the start of `docs`: 1 + 37 keys). The documents under those keys are a superset of
 * the phrase's hits (a bucket holds other keys too, and `use` is the start of `user` and `used`),
 * so the index still checks them; but they are few.
 *
 * Cost: about one posting per word of text (a document's repeated junction keys count once).
 */
import { PostingLists } from "./postingLists.ts";

/** Buckets of the hash; a posting list is made for a bucket on first use. */
const BUCKETS = 1 << 16;
/** Junctions listed per batch (see `JunctionPostings.pending`). */
const BATCH = 1 << 19;
/** Longest separator indexed (in UTF-16 units): longer runs are not junctions. */
export const MAX_SEPARATOR = 3;
/**
 * Only whitespace separates the words of a junction (a space: two thirds of all word gaps in
 * generated sessions; punctuation, slashes and backticks mostly stand beside identifiers, whose
 * trigrams are rare anyway). Half the postings and build time of indexing every short gap.
 */
const isSeparatorUnit = (c: number) => c === 0x20 || c === 0x0a || c === 0x09;
function isSeparator(text: string, from: number, to: number): boolean {
	if (to - from > MAX_SEPARATOR) return false;
	for (let i = from; i < to; i++) if (!isSeparatorUnit(text.charCodeAt(i))) return false;
	return true;
}
/** Units of a word kept in a key at each edge. */
const EDGE = 3;

const isTokenUnit = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f;
/** The token units, for enumerating what may stand beside a short edge of a needle. */
const TOKEN_UNITS = "abcdefghijklmnopqrstuvwxyz0123456789_";

/**
 * The key hash of a junction `text[l0, l1) + text[l1, r0) + text[r0, r1)`: left edge, separator,
 * right edge, each edge marked as a whole word or a cut one (FNV-1a, with markers above 16 bits).
 */
function junctionHash(text: string, l0: number, l1: number, leftWhole: boolean, r0: number, r1: number, rightWhole: boolean): number {
	let h = Math.imul(0x811c9dc5 ^ (leftWhole ? 0x10001 : 0x10002), 0x01000193);
	for (let i = l0; i < l1; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
	h = Math.imul(h ^ 0x10003, 0x01000193);
	for (let i = l1; i < r0; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
	h = Math.imul(h ^ 0x10004, 0x01000193);
	for (let i = r0; i < r1; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
	h = Math.imul(h ^ (rightWhole ? 0x10005 : 0x10006), 0x01000193);
	return (h ^ (h >>> 16)) & (BUCKETS - 1);
}

/** One junction of a needle: the edges as the needle gives them, and whether each is a whole word. */
export interface NeedleJunction {
	/** Left word's units in the needle (its end; the whole word when `leftBounded`). */
	readonly left: string;
	readonly leftBounded: boolean;
	readonly separator: string;
	readonly right: string;
	readonly rightBounded: boolean;
}

/**
 * The junctions of a folded needle: every run of 1–`MAX_SEPARATOR` whitespace units with token
 * units on both sides. An edge word is bounded when the needle has a separator beyond it (then the
 * text's word is exactly it); at the needle's start or end it may be part of a longer word.
 */
export function junctionsOf(needle: string): NeedleJunction[] {
	const runs: { start: number; end: number; token: boolean }[] = [];
	for (let i = 0; i < needle.length; ) {
		const token = isTokenUnit(needle.charCodeAt(i));
		const start = i;
		while (i < needle.length && isTokenUnit(needle.charCodeAt(i)) === token) i++;
		runs.push({ start, end: i, token });
	}
	const out: NeedleJunction[] = [];
	for (let k = 1; k + 1 < runs.length; k++) {
		const sep = runs[k] as (typeof runs)[number];
		const left = runs[k - 1] as (typeof runs)[number];
		const right = runs[k + 1] as (typeof runs)[number];
		if (sep.token || !isSeparator(needle, sep.start, sep.end)) continue;
		out.push({
			left: needle.slice(left.start, left.end),
			leftBounded: k - 1 > 0,
			separator: needle.slice(sep.start, sep.end),
			right: needle.slice(right.start, right.end),
			rightBounded: k + 2 < runs.length,
		});
	}
	return out;
}

export class JunctionPostings {
	private readonly postings = new PostingLists();
	/** Bucket → list id + 1 (0: no list yet). Made with the first document. */
	private table: Int32Array | undefined;
	/**
	 * Junctions found but not yet listed, as (bucket, document) pairs. They are listed in batches,
	 * in bucket order, so each list's tail is written once per batch: written as found, every
	 * junction landed on another list's block somewhere in the lists' memory, and the index took
	 * a third longer to build (the sort saves about a third of the junctions' share of it).
	 */
	private pendingBuckets = new Int32Array(1024);
	private pendingDocs = new Int32Array(1024);
	private pending = 0;

	/** `batch`: junctions listed per batch at most (tests make it small). */
	constructor(private readonly batch = BATCH) {}

	/** The posting lists, with every junction found so far listed. */
	get lists(): PostingLists {
		this.settle();
		return this.postings;
	}

	/** Before a query: everything listed, and the batch buffers back to their small size. */
	private settle(): void {
		this.flush();
		if (this.pendingBuckets.length > 1024) {
			this.pendingBuckets = new Int32Array(1024);
			this.pendingDocs = new Int32Array(1024);
		}
	}

	/** Lists a document under every junction key of its folded text (numbers ascend). */
	addDocument(folded: string, doc: number): void {
		const n = folded.length;
		let prevStart = -1;
		let prevEnd = -1;
		let i = 0;
		while (i < n) {
			if (!isTokenUnit(folded.charCodeAt(i))) {
				i++;
				continue;
			}
			const start = i;
			while (i < n && isTokenUnit(folded.charCodeAt(i))) i++;
			if (prevEnd >= 0 && isSeparator(folded, prevEnd, start)) {
				const leftLength = prevEnd - prevStart;
				const rightLength = i - start;
				const bucket = junctionHash(folded, Math.max(prevStart, prevEnd - EDGE), prevEnd, leftLength < EDGE, start, Math.min(i, start + EDGE), rightLength < EDGE);
				if (this.pending === this.pendingBuckets.length) {
					if (this.pending < this.batch) this.growPending();
					else this.flush(); // a document's junctions may span two batches: `hasLast` drops the repeat
				}
				this.pendingBuckets[this.pending] = bucket;
				this.pendingDocs[this.pending++] = doc;
			}
			prevStart = start;
			prevEnd = i;
		}
	}

	private growPending(): void {
		const buckets = new Int32Array(this.pendingBuckets.length * 2);
		buckets.set(this.pendingBuckets);
		this.pendingBuckets = buckets;
		const docs = new Int32Array(this.pendingDocs.length * 2);
		docs.set(this.pendingDocs);
		this.pendingDocs = docs;
	}

	/** Lists the pending junctions: a stable counting sort by bucket keeps each bucket's documents ascending. */
	private flush(): void {
		const count = this.pending;
		if (count === 0) return;
		this.pending = 0;
		const table = (this.table ??= new Int32Array(BUCKETS));
		const buckets = this.pendingBuckets;
		const docs = this.pendingDocs;
		const starts = new Int32Array(BUCKETS + 1);
		for (let k = 0; k < count; k++) {
			const at = (buckets[k] as number) + 1;
			starts[at] = (starts[at] as number) + 1;
		}
		for (let b = 0; b < BUCKETS; b++) starts[b + 1] = (starts[b + 1] as number) + (starts[b] as number);
		const sorted = new Int32Array(count);
		const next = starts.slice(0, BUCKETS);
		for (let k = 0; k < count; k++) {
			const b = buckets[k] as number;
			const at = next[b] as number;
			next[b] = at + 1;
			sorted[at] = docs[k] as number;
		}
		const lists = this.postings;
		for (let b = 0; b < BUCKETS; b++) {
			const from = starts[b] as number;
			const to = starts[b + 1] as number;
			if (from === to) continue;
			let id = (table[b] as number) - 1;
			if (id < 0) {
				id = lists.create();
				table[b] = id + 1;
			}
			for (let k = from; k < to; k++) {
				const doc = sorted[k] as number;
				if (!lists.hasLast(id, doc)) lists.add(id, doc);
			}
		}
	}

	/**
	 * The lists that hold every document in which the junction occurs (and others: they are to be
	 * checked), or `undefined` when an edge is too short to pin down (a single unit at the needle's
	 * start or end, or both edges open and short: too many keys).
	 */
	listsOf(j: NeedleJunction): number[] | undefined {
		const lefts = edgeKeys(j.left, j.leftBounded, "left");
		const rights = edgeKeys(j.right, j.rightBounded, "right");
		if (lefts === undefined || rights === undefined || lefts.length * rights.length > TOKEN_UNITS.length + 1) return undefined;
		this.settle();
		const out: number[] = [];
		if (!this.table) return out;
		for (const l of lefts) {
			for (const r of rights) {
				const text = l.units + j.separator + r.units;
				const bucket = junctionHash(text, 0, l.units.length, l.whole, l.units.length + j.separator.length, text.length, r.whole);
				const id = (this.table[bucket] as number) - 1;
				if (id >= 0 && !out.includes(id)) out.push(id);
			}
		}
		return out;
	}

	memoryBytes(): number {
		return this.lists.memoryBytes() + (this.table?.byteLength ?? 0) + this.pendingBuckets.byteLength + this.pendingDocs.byteLength;
	}
}

/** An edge key: the units a key holds for a word's edge, and whether the word is whole (shorter than `EDGE`). */
interface EdgeKey {
	readonly units: string;
	readonly whole: boolean;
}

/**
 * The keys a word edge of a needle may have in the text. Bounded, the text's word is the needle's:
 * one key. Open (at the needle's start for a left edge, its end for a right one), the text's word
 * may extend beyond it: with `EDGE` units or more, the key's units are all in the needle; with
 * `EDGE - 1`, the word is this one or one unit longer (1 + 37 keys); shorter: `undefined`.
 */
function edgeKeys(word: string, bounded: boolean, side: "left" | "right"): EdgeKey[] | undefined {
	const cut = (w: string) => (side === "left" ? w.slice(-EDGE) : w.slice(0, EDGE));
	if (bounded || word.length >= EDGE) return [{ units: cut(word), whole: bounded && word.length < EDGE }];
	if (word.length < EDGE - 1) return undefined;
	const out: EdgeKey[] = [{ units: word, whole: true }];
	for (const c of TOKEN_UNITS) out.push({ units: side === "left" ? c + word : word + c, whole: false });
	return out;
}
