/**
 * Lists of ascending document numbers, many of them small, in shared memory: the storage under the
 * search index's trigram and token postings.
 *
 * Memory is the point of the layout. A large history has millions of lists (one per distinct
 * trigram or word), most of them of one or two documents, so nothing here is an object per list:
 * per-list facts sit in growable typed arrays, and each list is a chain of small blocks in shared
 * 4 MB byte chunks, holding the gaps between document numbers as LEB128 varints (one byte for most
 * gaps). Blocks double from 4 to 256 payload bytes as a list grows. A list of one document costs
 * about 30 bytes; a posting about 1.2 bytes. Block pointers are 31-bit: up to 2 GB of blocks.
 */

const CHUNK = 1 << 22;
const MAX_CHUNKS = 512;
/** Payload sizes of block classes: a list's blocks double from 4 up to 256 bytes. */
const MAX_CLASS = 6;

// Per list, six int32 fields side by side, in pages of `PAGE` lists: a grown array would leave up
// to half its room unused (90 MB for the 4.6M trigram lists of a million documents).
const HEAD = 0;
/** Where the next byte of the list goes (in its tail block), or -1 before the first block. */
const WRITE = 1;
/** Payload bytes still free in the tail block. */
const ROOM = 2;
/** Last document number added (for gaps and for de-duplication within a document). */
const LAST = 3;
/** Documents in the list (its document frequency, forgotten documents included). */
const COUNT = 4;
/** Class of the tail block (its payload is 4 << class bytes). */
const CLASS = 5;
const STRIDE = 6;
const PAGE_SHIFT = 14;
const PAGE = 1 << PAGE_SHIFT;
const PAGE_MASK = PAGE - 1;
const SHIFT = 22;
const OFFSET = CHUNK - 1;

export class PostingLists {
	/** Pages of list fields; the first grows from 1024 lists to `PAGE`, then pages are added. */
	private readonly pages: Int32Array[] = [new Int32Array(1024 * STRIDE)];
	private lists = 0;
	private readonly chunks: Uint8Array[] = [];
	private top = CHUNK; // forces the first chunk
	/** Bytes of blocks allocated. */
	bytes = 0;

	/** Number of lists. */
	get size(): number {
		return this.lists;
	}

	/** A new, empty list; its id. */
	create(): number {
		const id = this.lists++;
		const p = id >>> PAGE_SHIFT;
		if (p === this.pages.length) this.pages.push(new Int32Array(PAGE * STRIDE));
		else if (p === 0 && id * STRIDE >= (this.pages[0] as Int32Array).length) {
			const first = this.pages[0] as Int32Array;
			const grown = new Int32Array(first.length * 2);
			grown.set(first);
			this.pages[0] = grown;
		}
		const f = this.pages[p] as Int32Array;
		const at = (id & PAGE_MASK) * STRIDE;
		f[at + HEAD] = -1;
		f[at + WRITE] = -1;
		f[at + ROOM] = 0;
		f[at + LAST] = -1;
		f[at + COUNT] = 0;
		f[at + CLASS] = -1;
		return id;
	}

	/** Whether a list's last document is `doc` (a cheap check before `add`, which ignores repeats too). */
	hasLast(id: number, doc: number): boolean {
		return (this.pages[id >>> PAGE_SHIFT] as Int32Array)[(id & PAGE_MASK) * STRIDE + LAST] === doc;
	}

	/** Adds a document to a list (documents come in ascending order; a repeat is ignored). */
	add(id: number, doc: number): void {
		const f = this.pages[id >>> PAGE_SHIFT] as Int32Array;
		const at = (id & PAGE_MASK) * STRIDE;
		const lastDoc = f[at + LAST] as number;
		if (lastDoc === doc) return;
		f[at + LAST] = doc;
		f[at + COUNT] = (f[at + COUNT] as number) + 1;
		let gap = doc - lastDoc;
		const width = gap < 0x80 ? 1 : gap < 0x4000 ? 2 : gap < 0x200000 ? 3 : gap < 0x10000000 ? 4 : 5;
		let write = f[at + WRITE] as number;
		let room = f[at + ROOM] as number;
		if (width > room) {
			// A new block, twice the last one's size up to 256 bytes, linked from the end of the last one's payload.
			const cls = Math.min(MAX_CLASS, (f[at + CLASS] as number) + 1);
			const next = this.allocate(cls);
			if (write < 0) f[at + HEAD] = next;
			else writeInt(this.chunks[write >>> SHIFT] as Uint8Array, (write & OFFSET) + room, next);
			f[at + CLASS] = cls;
			write = next + 1;
			room = 4 << cls;
		}
		const chunk = this.chunks[write >>> SHIFT] as Uint8Array;
		let w = write & OFFSET;
		while (gap >= 0x80) {
			chunk[w++] = (gap & 0x7f) | 0x80;
			gap = gap >>> 7;
		}
		chunk[w] = gap;
		f[at + WRITE] = write + width;
		f[at + ROOM] = room - width;
	}

	/** Number of documents in a list. */
	frequency(id: number): number {
		return this.field(id, COUNT);
	}

	/** The documents of a list, ascending. */
	documents(id: number): Int32Array {
		const out = new Int32Array(this.field(id, COUNT));
		let n = 0;
		let doc = -1;
		let block = this.field(id, HEAD);
		while (block >= 0) {
			const chunk = this.chunks[block >>> SHIFT] as Uint8Array;
			const at = block & OFFSET;
			const size = 4 << (chunk[at] as number);
			let i = at + 1;
			const end = i + size;
			while (i < end) {
				let b = chunk[i] as number;
				if (b === 0) break; // the rest of the block is unused
				let gap = b & 0x7f;
				let shift = 7;
				while (b & 0x80) {
					b = chunk[++i] as number;
					gap |= (b & 0x7f) << shift;
					shift += 7;
				}
				i++;
				doc += gap;
				out[n++] = doc;
			}
			block = readInt(chunk, end);
		}
		return n === out.length ? out : out.subarray(0, n);
	}

	/**
	 * Sets the bit of every document of a list in `bits` (bit `doc & 31` of word `doc >> 5`): a
	 * union of many lists without an array per list (the decoding loop of `documents`, inlined).
	 */
	mark(id: number, bits: Int32Array): void {
		let doc = -1;
		let block = this.field(id, HEAD);
		while (block >= 0) {
			const chunk = this.chunks[block >>> SHIFT] as Uint8Array;
			const at = block & OFFSET;
			let i = at + 1;
			const end = i + (4 << (chunk[at] as number));
			while (i < end) {
				let b = chunk[i] as number;
				if (b === 0) break;
				let gap = b & 0x7f;
				let shift = 7;
				while (b & 0x80) {
					b = chunk[++i] as number;
					gap |= (b & 0x7f) << shift;
					shift += 7;
				}
				i++;
				doc += gap;
				bits[doc >>> 5] = (bits[doc >>> 5] as number) | (1 << (doc & 31));
			}
			block = readInt(chunk, end);
		}
	}

	/** The candidates (ascending) that are also in a list, decoded as it is walked. */
	intersect(id: number, candidates: Int32Array): Int32Array {
		const out = new Int32Array(candidates.length);
		let n = 0;
		let c = 0;
		let want = candidates[0] as number;
		let doc = -1;
		let block = this.field(id, HEAD);
		while (block >= 0 && c < candidates.length) {
			const chunk = this.chunks[block >>> SHIFT] as Uint8Array;
			const at = block & OFFSET;
			let i = at + 1;
			const end = i + (4 << (chunk[at] as number));
			while (i < end) {
				let b = chunk[i] as number;
				if (b === 0) break;
				let gap = b & 0x7f;
				let shift = 7;
				while (b & 0x80) {
					b = chunk[++i] as number;
					gap |= (b & 0x7f) << shift;
					shift += 7;
				}
				i++;
				doc += gap;
				while (want < doc) {
					if (++c === candidates.length) return out.subarray(0, n);
					want = candidates[c] as number;
				}
				if (want === doc) {
					out[n++] = doc;
					if (++c === candidates.length) return out.subarray(0, n);
					want = candidates[c] as number;
				}
			}
			block = readInt(chunk, end);
		}
		return out.subarray(0, n);
	}

	private field(id: number, field: number): number {
		return (this.pages[id >>> PAGE_SHIFT] as Int32Array)[(id & PAGE_MASK) * STRIDE + field] as number;
	}

	/** A zeroed block of a class: class byte, payload, next pointer (-1). */
	private allocate(cls: number): number {
		const size = 1 + (4 << cls) + 4;
		if (this.top + size > CHUNK) {
			if (this.chunks.length >= MAX_CHUNKS) throw new RangeError("posting lists beyond 2 GB");
			this.chunks.push(new Uint8Array(CHUNK));
			this.top = 0;
		}
		const chunkIndex = this.chunks.length - 1;
		const chunk = this.chunks[chunkIndex] as Uint8Array;
		const at = this.top;
		this.top += size;
		this.bytes += size;
		chunk[at] = cls;
		writeInt(chunk, at + 1 + (4 << cls), -1);
		return chunkIndex * CHUNK + at;
	}

	/** Bytes held: block chunks and per-list tables. */
	memoryBytes(): number {
		let pages = 0;
		for (const page of this.pages) pages += page.byteLength;
		return this.chunks.length * CHUNK + pages;
	}
}

function writeInt(chunk: Uint8Array, at: number, value: number): void {
	chunk[at] = value & 0xff;
	chunk[at + 1] = (value >>> 8) & 0xff;
	chunk[at + 2] = (value >>> 16) & 0xff;
	chunk[at + 3] = (value >>> 24) & 0xff;
}

function readInt(chunk: Uint8Array, at: number): number {
	return ((chunk[at] as number) | ((chunk[at + 1] as number) << 8) | ((chunk[at + 2] as number) << 16) | ((chunk[at + 3] as number) << 24)) | 0;
}
