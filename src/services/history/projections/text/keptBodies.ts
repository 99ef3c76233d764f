import { searchableBuffer } from "../../model/byteSearch.ts";
import type { SessionText } from "./sessionText.ts";

/**
 * The bodies (meta and folded text) of the sessions' projections, kept in memory between searches
 * by a process that answers many of them (the CLI's resident query server): a search then reads
 * no projection file, only what changed since the last one. Without it each search reads every
 * body again (≈ 28 ms of a warm search's ≈ 46 on the bench's 1 GB history, the copy from the page
 * cache).
 *
 * A body is kept for its session's header line, which names the archive revision it was made
 * from: the same line means the same bytes, whichever process wrote them (`StoredTexts.body`
 * checks the file's against the head's the same way), so a kept body is used only for a head with
 * that exact line. Bodies are copied into shared searchable buffers (`searchableBuffer`), so the
 * scan still searches them in WebAssembly. A body replaced by a newer revision leaves its bytes
 * behind; once those are most of what is held, everything is let go and kept again as the next
 * searches read it. Nothing is kept beyond `budget` bytes: a larger history reads the rest from
 * its files, as before.
 */
export class KeptBodies {
	private readonly held = new Map<
		string,
		{ readonly line: Buffer; readonly body: Buffer; text?: { readonly head: SessionText; readonly withBody: SessionText } }
	>();
	private slab: Buffer | undefined;
	private slabUsed = 0;
	/** Bytes of every buffer made (what is held in memory), and of the bodies still in use. */
	private madeBytes = 0;
	private liveBytes = 0;

	/** @param budget the most bytes of buffers held; @param slabBytes one shared buffer's size (tests: small) */
	constructor(
		private readonly budget: number,
		private readonly slabBytes = SLAB_BYTES,
	) {}

	/**
	 * `head` with the body kept for its revision (`SessionText.withBody`), or `undefined`. The same
	 * head asked again gets the same text: it is not made, nor its table checked, at every search.
	 */
	text(head: SessionText): SessionText | undefined {
		const kept = this.held.get(head.sessionId);
		if (kept === undefined) return undefined;
		if (kept.text?.head === head) return kept.text.withBody;
		const n = head.headerBytes();
		if (kept.line.length !== n || kept.line.compare(head.bytes, 0, n, 0, n) !== 0) return undefined;
		const withBody = head.withBody(kept.body);
		kept.text = { head, withBody };
		return withBody;
	}

	/**
	 * Keeps a copy of `body`, read for `head`, and returns `head` with it (`text`); `undefined` when
	 * it does not fit the budget (the caller uses the bytes it read, valid until its next read).
	 */
	keep(head: SessionText, body: Buffer): SessionText | undefined {
		const before = this.held.get(head.sessionId);
		if (before) {
			this.held.delete(head.sessionId);
			this.liveBytes -= before.body.length;
		}
		// Mostly bytes of replaced revisions: let go, and kept again from what the next searches read.
		if (this.madeBytes > 2 * this.liveBytes + this.slabBytes) this.clear();
		const copy = this.room(body.length);
		if (copy === undefined) return undefined;
		body.copy(copy);
		this.held.set(head.sessionId, { line: Buffer.from(head.bytes.subarray(0, head.headerBytes())), body: copy });
		this.liveBytes += copy.length;
		return this.text(head);
	}

	/** Bytes held in memory (buffers made), for a server's status. */
	get bytes(): number {
		return this.madeBytes;
	}

	/** Lets everything go (the history was rebuilt). */
	clear(): void {
		this.held.clear();
		this.slab = undefined;
		this.slabUsed = 0;
		this.madeBytes = 0;
		this.liveBytes = 0;
	}

	/** Room for `length` bytes: in the shared buffer, a new one, or (a large body) a buffer of its own. */
	private room(length: number): Buffer | undefined {
		if (this.slab && this.slabUsed + length <= this.slab.length) {
			const out = this.slab.subarray(this.slabUsed, this.slabUsed + length);
			this.slabUsed += length;
			return out;
		}
		const own = length > this.slabBytes / 4;
		const size = own ? length : this.slabBytes;
		if (this.madeBytes + size > this.budget) return undefined;
		const made = searchableBuffer(size) ?? Buffer.allocUnsafe(size);
		this.madeBytes += size;
		if (own) return made;
		this.slab = made;
		this.slabUsed = length;
		return made.subarray(0, length);
	}
}

/** One shared buffer: 16 MB (a body larger than a quarter of it gets a buffer of its own). */
const SLAB_BYTES = 16 << 20;
