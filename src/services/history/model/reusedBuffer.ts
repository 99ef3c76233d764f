/** Gives a buffer of a size asked for, valid until it is asked again: a `ReusedBuffer`, a `TextArena`. */
export interface BufferSource {
	take(size: number): Buffer;
}

/**
 * A buffer used again and again for bytes needed only until the next use: a file read and parsed at
 * once, a projection made and written out at once. Fresh memory costs more than what is done in
 * it on this machine (its first touch faults a page in): the bench's 919 archives (108 MB) took
 * 260 ms read into a new buffer each and 70 ms read into one reused buffer. Above `keep` bytes a
 * buffer of its own is given, and the reused one does not grow to it.
 */
export class ReusedBuffer implements BufferSource {
	private buffer = Buffer.alloc(0);

	constructor(private readonly keep: number) {}

	/** `size` bytes to use, valid until the next `take`. */
	take(size: number): Buffer {
		if (size > this.keep) return Buffer.allocUnsafe(size);
		if (this.buffer.length < size) this.buffer = Buffer.allocUnsafeSlow(Math.min(this.keep, Math.max(size, 2 * this.buffer.length, 64 * 1024)));
		return this.buffer.subarray(0, size);
	}
}
