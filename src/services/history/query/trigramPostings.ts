/**
 * Trigram postings of the search index: for every trigram (three UTF-16 code units of folded
 * text), the ascending numbers of the documents that contain it. Trigram ids come from a direct
 * table for ASCII trigrams (2M slots) and an open-addressing hash for the rest (CJK, accents,
 * emoji); the lists themselves are `PostingLists`.
 */
import { PostingLists } from "./postingLists.ts";

const ASCII_TABLE = 1 << 21;

export class TrigramPostings {
	/** ASCII trigram `c0<<14 | c1<<7 | c2` → id + 1 (0: none yet). */
	private readonly ascii = new Int32Array(ASCII_TABLE);
	/** Other trigrams: key + 1 (0 = empty slot) → id, open addressing with linear probing. */
	private keys = new Float64Array(1 << 16);
	private ids = new Int32Array(1 << 16);
	private used = 0;
	readonly lists = new PostingLists();

	/** Number of distinct trigrams seen. */
	get size(): number {
		return this.lists.size;
	}

	get bytes(): number {
		return this.lists.bytes;
	}

	/** The id of a trigram, or -1 when no document has it. */
	find(c0: number, c1: number, c2: number): number {
		if ((c0 | c1 | c2) < 128) return (this.ascii[(c0 << 14) | (c1 << 7) | c2] as number) - 1;
		const key = c0 * 4294967296 + c1 * 65536 + c2 + 1;
		const mask = this.keys.length - 1;
		for (let slot = hash(c0, c1, c2) & mask; ; slot = (slot + 1) & mask) {
			const k = this.keys[slot] as number;
			if (k === 0) return -1;
			if (k === key) return this.ids[slot] as number;
		}
	}

	/**
	 * Lists document `doc` under every trigram of a folded text (documents in ascending order).
	 * The hot loop of building the index: characters roll through three variables, and a trigram
	 * seen before in the same document costs a table read and one comparison.
	 */
	addText(text: string, doc: number): void {
		const lists = this.lists;
		const ascii = this.ascii;
		const n = text.length;
		if (n < 3) return;
		let c0 = text.charCodeAt(0);
		let c1 = text.charCodeAt(1);
		for (let i = 2; i < n; i++) {
			const c2 = text.charCodeAt(i);
			if ((c0 | c1 | c2) < 128) {
				const slot = (c0 << 14) | (c1 << 7) | c2;
				let id = (ascii[slot] as number) - 1;
				if (id < 0) {
					id = lists.create();
					ascii[slot] = id + 1;
				} else if (lists.hasLast(id, doc)) {
					c0 = c1;
					c1 = c2;
					continue;
				}
				lists.add(id, doc);
			} else lists.add(this.hashedId(c0, c1, c2), doc);
			c0 = c1;
			c1 = c2;
		}
	}

	/** Adds document `doc` to the trigram's list (documents must come in ascending order). */
	add(c0: number, c1: number, c2: number, doc: number): void {
		let id: number;
		if ((c0 | c1 | c2) < 128) {
			const slot = (c0 << 14) | (c1 << 7) | c2;
			id = (this.ascii[slot] as number) - 1;
			if (id < 0) {
				id = this.lists.create();
				this.ascii[slot] = id + 1;
			}
		} else id = this.hashedId(c0, c1, c2);
		this.lists.add(id, doc);
	}

	private hashedId(c0: number, c1: number, c2: number): number {
		const key = c0 * 4294967296 + c1 * 65536 + c2 + 1;
		let mask = this.keys.length - 1;
		let slot = hash(c0, c1, c2) & mask;
		for (; ; slot = (slot + 1) & mask) {
			const k = this.keys[slot] as number;
			if (k === key) return this.ids[slot] as number;
			if (k === 0) break;
		}
		// Grown at three quarters full (not half): at a million documents the table holds ~4.5M
		// trigrams, and each doubling it saves costs 12 bytes a slot; linear probing stays short.
		if ((this.used + 1) * 4 > this.keys.length * 3) {
			this.grow();
			mask = this.keys.length - 1;
			for (slot = hash(c0, c1, c2) & mask; this.keys[slot] !== 0; slot = (slot + 1) & mask);
		}
		const id = this.lists.create();
		this.keys[slot] = key;
		this.ids[slot] = id;
		this.used++;
		return id;
	}

	private grow(): void {
		const oldKeys = this.keys;
		const oldIds = this.ids;
		this.keys = new Float64Array(oldKeys.length * 2);
		this.ids = new Int32Array(oldIds.length * 2);
		const mask = this.keys.length - 1;
		for (let s = 0; s < oldKeys.length; s++) {
			const key = oldKeys[s] as number;
			if (key === 0) continue;
			const k = key - 1;
			const c0 = Math.floor(k / 4294967296);
			const c1 = Math.floor(k / 65536) % 65536;
			const c2 = k % 65536;
			let slot = hash(c0, c1, c2) & mask;
			while (this.keys[slot] !== 0) slot = (slot + 1) & mask;
			this.keys[slot] = key;
			this.ids[slot] = oldIds[s] as number;
		}
	}

	/** Bytes held: the key tables and the lists. */
	memoryBytes(): number {
		return this.ascii.byteLength + this.keys.byteLength + this.ids.byteLength + this.lists.memoryBytes();
	}
}

function hash(c0: number, c1: number, c2: number): number {
	let h = Math.imul(c0 ^ 0x9e3779b9, 0x85ebca6b);
	h = Math.imul(h ^ c1 ^ (h >>> 13), 0xc2b2ae35);
	h = Math.imul(h ^ c2 ^ (h >>> 16), 0x27d4eb2f);
	return (h ^ (h >>> 15)) >>> 0;
}
