import { indexOfBytes } from "../../model/byteSearch.ts";

/**
 * The rows whose folded text holds a needle, found while a session's text section is read a chunk
 * at a time (each chunk searched while it is still in the processor's cache, then let go): what
 * `SessionText.matching` finds over the whole section at once, the same rows in the same order.
 * A match that runs across two chunks is found in the seam: the previous chunk's last
 * `needle.length - 1` bytes and this chunk's first. No match spans two documents (a 0xFF byte,
 * never in UTF-8, ends each), so after a row matches the search goes on at the next row.
 */
export class ChunkMatcher {
	readonly rows: number[] = [];
	private doc = 0;
	/** Where the search goes on, as an offset in the text section (the end of the last matched row's text, plus its separator). */
	private resume = 0;
	/**
	 * The last bytes of the chunk before (fewer than the needle), and their offset in the text
	 * section; made only when a chunk that is not the last leaves some (most sessions are read in
	 * one chunk, and a search makes a matcher per session).
	 */
	private carry: Buffer | undefined;
	private carried = 0;
	private carryAt = 0;
	private seam: Buffer | undefined;

	constructor(
		private readonly needle: Uint8Array,
		private readonly docs: number,
		private readonly textEnd: (doc: number) => number,
	) {}

	/**
	 * Searches a chunk of the text section that starts at `at` (offsets in the text section; chunks
	 * come in order). `last`: no chunk follows (nothing is kept for a seam).
	 */
	feed(chunk: Buffer, at: number, last = false): void {
		const k = this.needle.length;
		if (k === 0 || this.doc >= this.docs) return;
		if (this.carried > 0 && k > 1 && this.carry) {
			const head = Math.min(k - 1, chunk.length);
			this.seam ??= Buffer.alloc(2 * (k - 1));
			this.carry.copy(this.seam, 0, 0, this.carried);
			chunk.copy(this.seam, this.carried, 0, head);
			const seam = this.seam.subarray(0, this.carried + head);
			for (let from = Math.max(0, this.resume - this.carryAt); ; ) {
				const found = seam.indexOf(this.needle, from);
				// Only matches that begin in the carried bytes: the rest are found in the chunk itself.
				if (found < 0 || found >= this.carried) break;
				if (!this.found(this.carryAt + found)) return;
				from = this.resume - this.carryAt;
			}
		}
		for (let from = Math.max(0, this.resume - at); from < chunk.length; ) {
			const found = indexOfBytes(chunk, this.needle, from);
			if (found < 0) break;
			if (!this.found(at + found)) return;
			from = this.resume - at;
		}
		if (last || k === 1) return;
		// The tail kept for the next chunk's seam (with what was carried, if this chunk is shorter).
		this.carry ??= Buffer.alloc(k - 1);
		const keep = Math.min(k - 1, this.carried + chunk.length);
		const fromChunk = Math.min(keep, chunk.length);
		const fromCarry = keep - fromChunk;
		if (fromCarry > 0) this.carry.copy(this.carry, 0, this.carried - fromCarry, this.carried);
		chunk.copy(this.carry, fromCarry, chunk.length - fromChunk);
		this.carried = keep;
		this.carryAt = at + chunk.length - keep;
	}

	/** A match at `offset`: its row is kept, and the search goes on after that row's text. `false` when every row is done. */
	private found(offset: number): boolean {
		while (this.doc < this.docs && this.textEnd(this.doc) <= offset) this.doc++;
		if (this.doc >= this.docs) return false;
		this.rows.push(this.doc);
		this.resume = this.textEnd(this.doc) + 1;
		this.doc++;
		return this.doc < this.docs;
	}
}
