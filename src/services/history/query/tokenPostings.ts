/**
 * Word postings of the search index: for every distinct token of folded text — a maximal run of
 * `a–z`, `0–9` and `_`, three units or longer — the ascending numbers of the documents that
 * contain it.
 *
 * What they are for: a needle made only of such characters (`config`, `error`, `parse_args`) can
 * only occur inside one token, so the documents that contain it are exactly the union of the lists
 * of the tokens that contain it. That answer needs no look at any document's bytes, which is what
 * makes a needle found in a large share of a million nodes cheap; the trigram lists cannot tell
 * such a needle's hits from its false candidates without reading them.
 *
 * The tokens that contain a needle are found through the tokens' own trigrams (over token ids, in
 * a table of the 37³ trigrams of token characters): the needle's rarest trigram's tokens, narrowed
 * by its others, then checked with `includes` — microseconds, where a pass over a dictionary of
 * every token took about a millisecond at 100k documents.
 */
import { PostingLists } from "./postingLists.ts";

const A = 0x61;
const Z = 0x7a;
const D0 = 0x30;
const D9 = 0x39;
const UNDERSCORE = 0x5f;
const isTokenUnit = (c: number) => (c >= A && c <= Z) || (c >= D0 && c <= D9) || c === UNDERSCORE;
const TOKEN = /^[a-z0-9_]+$/;
/** Token characters as digits of base 37, for trigram codes. */
const GRAMS = 37 * 37 * 37;
const digit = (c: number) => (c >= A ? c - A : c >= D0 && c <= D9 ? 26 + c - D0 : 36);
const gramCode = (text: string, i: number) => (digit(text.charCodeAt(i)) * 37 + digit(text.charCodeAt(i + 1))) * 37 + digit(text.charCodeAt(i + 2));

/** Whether a folded needle (of three units or more) is made only of token characters, and so lies within one token. */
export function isTokenNeedle(needle: string): boolean {
	return needle.length >= 3 && TOKEN.test(needle);
}

export class TokenPostings {
	readonly lists = new PostingLists();
	/** Tokens by id, their hashes, and an open-addressing table of ids + 1 by hash. */
	private readonly tokens: string[] = [];
	private hashes = new Int32Array(1024);
	private table = new Int32Array(1 << 12);
	/** The tokens' own trigrams: trigram (`gramCode`) → id + 1 of its list of token ids. */
	private readonly grams = new PostingLists();
	private readonly gramIds = new Int32Array(GRAMS);

	get size(): number {
		return this.tokens.length;
	}

	/**
	 * Lists every token of a document's folded text under its number (numbers ascend). A token is
	 * looked up by a hash computed as it is scanned and compared in place: no string is made for a
	 * token already known.
	 */
	addDocument(folded: string, doc: number): void {
		const n = folded.length;
		let i = 0;
		while (i < n) {
			let c = folded.charCodeAt(i);
			if (!isTokenUnit(c)) {
				i++;
				continue;
			}
			const start = i;
			let h = 0x811c9dc5;
			do {
				h = Math.imul(h ^ c, 0x01000193);
				c = ++i < n ? folded.charCodeAt(i) : 0;
			} while (i < n && isTokenUnit(c));
			// Only words of three or more units: only needles that long are answered from here, and
			// a shorter word cannot contain one.
			if (i - start < 3) continue;
			const id = this.idOf(folded, start, i, h | 0);
			if (!this.lists.hasLast(id, doc)) this.lists.add(id, doc);
		}
	}

	/** The id of the token `text[start, end)` with hash `h`, made when new. */
	private idOf(text: string, start: number, end: number, h: number): number {
		const mask = this.table.length - 1;
		const length = end - start;
		let slot = (h ^ (h >>> 15)) & mask;
		for (;;) {
			const entry = this.table[slot] as number;
			if (entry === 0) break;
			const id = entry - 1;
			if (this.hashes[id] === h) {
				const token = this.tokens[id] as string;
				if (token.length === length) {
					let same = true;
					for (let k = 0; k < length; k++) {
						if (token.charCodeAt(k) !== text.charCodeAt(start + k)) {
							same = false;
							break;
						}
					}
					if (same) return id;
				}
			}
			slot = (slot + 1) & mask;
		}
		const id = this.lists.create();
		// A slice keeps the document's whole folded text alive: keep a flat copy of the token.
		const token = (" " + text.slice(start, end)).slice(1);
		this.tokens.push(token);
		for (let i = 0; i + 2 < token.length; i++) {
			const code = gramCode(token, i);
			let gram = (this.gramIds[code] as number) - 1;
			if (gram < 0) {
				gram = this.grams.create();
				this.gramIds[code] = gram + 1;
			}
			this.grams.add(gram, id);
		}
		if (id >= this.hashes.length) {
			const grown = new Int32Array(this.hashes.length * 2);
			grown.set(this.hashes);
			this.hashes = grown;
		}
		this.hashes[id] = h;
		this.table[slot] = id + 1;
		if (this.tokens.length * 2 > this.table.length) this.rehash();
		return id;
	}

	private rehash(): void {
		const table = new Int32Array(this.table.length * 2);
		const mask = table.length - 1;
		for (let id = 0; id < this.tokens.length; id++) {
			const h = this.hashes[id] as number;
			let slot = (h ^ (h >>> 15)) & mask;
			while (table[slot] !== 0) slot = (slot + 1) & mask;
			table[slot] = id + 1;
		}
		this.table = table;
	}

	/** At least as many as the tokens that contain the needle: those that hold its rarest trigram (a few table reads). */
	tokensAtMost(needle: string): number {
		let least = this.tokens.length;
		for (let i = 0; i + 2 < needle.length; i++) {
			const id = (this.gramIds[gramCode(needle, i)] as number) - 1;
			if (id < 0) return 0;
			least = Math.min(least, this.grams.frequency(id));
		}
		return least;
	}

	/** The lists of the tokens that contain the needle, and the documents they hold together (with repeats). */
	listsContaining(needle: string): { lists: number[]; postings: number } {
		const grams = this.grams;
		let rarest = -1;
		const others: number[] = [];
		for (let i = 0; i + 2 < needle.length; i++) {
			const id = (this.gramIds[gramCode(needle, i)] as number) - 1;
			if (id < 0) return { lists: [], postings: 0 };
			if (rarest < 0 || grams.frequency(id) < grams.frequency(rarest)) {
				if (rarest >= 0) others.push(rarest);
				rarest = id;
			} else others.push(id);
		}
		let candidates = grams.documents(rarest);
		for (const id of others) if (candidates.length > 64) candidates = grams.intersect(id, candidates);
		const lists: number[] = [];
		let postings = 0;
		for (const token of candidates) {
			if ((this.tokens[token] as string).includes(needle)) {
				lists.push(token);
				postings += this.lists.frequency(token);
			}
		}
		return { lists, postings };
	}

	memoryBytes(): number {
		return this.lists.memoryBytes() + this.grams.memoryBytes() + this.gramIds.byteLength + this.hashes.byteLength + this.table.byteLength + this.tokens.length * 48;
	}
}
