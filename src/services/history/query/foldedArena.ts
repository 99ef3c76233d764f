/**
 * The folded text of every indexed document, as UTF-8 bytes in shared buffers: what the n-gram
 * index verifies candidates against and scans for needles shorter than a trigram.
 *
 * One compact copy instead of a second string per document: V8 keeps a text with any non-ASCII
 * character as two bytes per character, while its folded UTF-8 form is about one byte per
 * character for the mostly-ASCII text of coding sessions, and lives outside the JavaScript heap.
 * Each document is followed by a 0xFF byte, which never occurs in UTF-8, so no match can run from
 * one document into the next. Matching on UTF-8 bytes is the same as matching on UTF-16 units for
 * a needle that is well-formed and has no U+FFFD (a text's lone surrogates become U+FFFD here); the
 * index does not use the arena for any other needle.
 */

const CHUNK = 1 << 24;
const SEPARATOR = 0xff;

export class FoldedArena {
	private readonly chunks: Buffer[] = [];
	/** Bytes used in each buffer: what lies beyond is not ours (the buffers are not zeroed). */
	private readonly used: number[] = [];
	private top = CHUNK;
	/** Per chunk: the documents in it, and their starts, in order (for mapping a match to its document). */
	private readonly docsOf: number[][] = [];
	private readonly startsOf: number[][] = [];
	/** Per document number: its chunk (-1: none), start and length. */
	private chunkOf = new Int32Array(1024).fill(-1);
	private startOf = new Int32Array(1024);
	private lengthOf = new Int32Array(1024);
	/** Bytes of documents added (separators included). */
	bytes = 0;

	/** Stores a document's folded text under its number (numbers ascend). */
	add(doc: number, folded: string): void {
		const length = Buffer.byteLength(folded, "utf8");
		if (this.top + length + 1 > (this.chunks[this.chunks.length - 1]?.length ?? 0)) {
			// Buffers grow with the arena (a small history does not pay for 16 MB), up to 16 MB each.
			this.chunks.push(Buffer.allocUnsafe(Math.max(Math.min(CHUNK, Math.max(1 << 16, this.bytes)), length + 1)));
			this.docsOf.push([]);
			this.startsOf.push([]);
			this.top = 0;
		}
		const chunk = this.chunks.length - 1;
		const buffer = this.chunks[chunk] as Buffer;
		const start = this.top;
		buffer.write(folded, start, "utf8");
		buffer[start + length] = SEPARATOR;
		this.top += length + 1;
		this.used[chunk] = this.top;
		this.bytes += length + 1;
		(this.docsOf[chunk] as number[]).push(doc);
		(this.startsOf[chunk] as number[]).push(start);
		if (doc >= this.chunkOf.length) this.grow(doc);
		this.chunkOf[doc] = chunk;
		this.startOf[doc] = start;
		this.lengthOf[doc] = length;
	}

	private grow(doc: number): void {
		const size = Math.max(doc + 1, this.chunkOf.length * 2);
		const chunkOf = new Int32Array(size).fill(-1);
		chunkOf.set(this.chunkOf);
		const startOf = new Int32Array(size);
		startOf.set(this.startOf);
		const lengthOf = new Int32Array(size);
		lengthOf.set(this.lengthOf);
		this.chunkOf = chunkOf;
		this.startOf = startOf;
		this.lengthOf = lengthOf;
	}

	/** Forgets where a document is (its bytes stay until the arena is rebuilt). */
	remove(doc: number): void {
		if (doc < this.chunkOf.length) this.chunkOf[doc] = -1;
	}

	/** Bytes a live document takes (separator included); 0 once removed. */
	sizeOf(doc: number): number {
		return doc < this.chunkOf.length && (this.chunkOf[doc] as number) >= 0 ? (this.lengthOf[doc] as number) + 1 : 0;
	}

	/** Whether a document's folded text contains the needle's bytes. */
	contains(doc: number, needle: Uint8Array): boolean {
		const chunk = doc < this.chunkOf.length ? (this.chunkOf[doc] as number) : -1;
		if (chunk < 0) return false;
		const start = this.startOf[doc] as number;
		const length = this.lengthOf[doc] as number;
		if (needle.length > length) return false;
		return (this.chunks[chunk] as Buffer).subarray(start, start + length).indexOf(needle) >= 0;
	}

	/**
	 * The candidates (ascending numbers) whose folded text contains the needle's bytes. `dense`:
	 * the candidates are many, so one forward pass is cheaper than a check each — the next
	 * occurrence after a candidate's start is looked up once and serves every candidate before it.
	 */
	verify(candidates: Int32Array, needle: Uint8Array, dense: boolean): number[] {
		const out: number[] = [];
		if (!dense) {
			for (const num of candidates) if (this.contains(num, needle)) out.push(num);
			return out;
		}
		let chunk = -1;
		let next = -1; // first occurrence at or after the previous candidate's start; -2: none left in the chunk
		for (const num of candidates) {
			const c = num < this.chunkOf.length ? (this.chunkOf[num] as number) : -1;
			if (c < 0) continue;
			if (c !== chunk) {
				chunk = c;
				next = -1;
			}
			// (An occurrence found past the used bytes lies past every document's end: no hit.)
			if (next === -2) continue;
			const start = this.startOf[num] as number;
			if (next < start) {
				next = (this.chunks[c] as Buffer).indexOf(needle, start);
				if (next < 0) {
					next = -2;
					continue;
				}
			}
			// An occurrence cannot run past the document: the separator is in no needle.
			if (next < start + (this.lengthOf[num] as number)) out.push(num);
		}
		return out;
	}

	/**
	 * Every document (number) whose folded text contains the needle's bytes, ascending: one native
	 * `indexOf` pass over the buffers, skipping to the next document after each match.
	 */
	scan(needle: Uint8Array, isLive: (doc: number) => boolean): number[] {
		const out: number[] = [];
		for (let c = 0; c < this.chunks.length; c++) {
			const buffer = this.chunks[c] as Buffer;
			const end = this.used[c] ?? 0;
			const docs = this.docsOf[c] as number[];
			const starts = this.startsOf[c] as number[];
			let from = 0;
			let k = 0; // index into docs/starts, moves forward only
			while (from < end) {
				const at = buffer.indexOf(needle, from);
				if (at < 0 || at >= end) break;
				while (k + 1 < starts.length && (starts[k + 1] as number) <= at) k++;
				const doc = docs[k] as number;
				if (isLive(doc) && this.chunkOf[doc] === c) out.push(doc);
				// Next document: its start, or the end of this chunk.
				from = k + 1 < starts.length ? (starts[k + 1] as number) : end;
			}
		}
		return out;
	}

	/** Bytes held by the buffers. */
	memoryBytes(): number {
		let n = 0;
		for (const b of this.chunks) n += b.length;
		return n;
	}
}
