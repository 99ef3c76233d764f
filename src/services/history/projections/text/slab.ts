/**
 * Copies into shared buffers of 1 MB (a larger copy gets its own). A buffer lives while any copy
 * in it does: for the heads a search keeps, which live as long as the process or their session's
 * next revision.
 */
export class Slab {
	private buffer = Buffer.alloc(0);
	private used = 0;

	copy(bytes: Buffer): Buffer {
		if (bytes.length > SLAB_BYTES / 4) return Buffer.from(bytes);
		if (this.used + bytes.length > this.buffer.length) {
			this.buffer = Buffer.allocUnsafe(SLAB_BYTES);
			this.used = 0;
		}
		const out = this.buffer.subarray(this.used, this.used + bytes.length);
		bytes.copy(out);
		this.used += bytes.length;
		return out;
	}
}

const SLAB_BYTES = 1 << 20;
