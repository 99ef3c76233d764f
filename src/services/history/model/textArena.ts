/**
 * Where rebuilding the search text reads archives: WebAssembly memory holding one archive's bytes
 * and, after them, room for its texts twice (as written, and folded), with the byte module's
 * `next_text` and `unescape_fold` (`byteSearch.wat`) working on them.
 *
 * Why: rebuilding the text projection of the bench's 1 GB history spent most of its time on the
 * texts — decoding each archive's bytes into JavaScript strings, `JSON.parse` copying every text out
 * of them, then lowercasing, measuring and encoding each text back to UTF-8 twice. A text's UTF-8 is
 * its JSON string's bytes with the escapes undone, and for an ASCII text (71 % of them there) the
 * folded form is those bytes with A–Z lowered: both are made here sixteen bytes at a time, and only
 * texts beyond ASCII are folded as strings (`projectArchiveTexts.ts`).
 *
 * One arena serves one rebuild (a catch-up that makes every projection), one archive at a time, and
 * goes with it: its memory grows to three times the largest archive read and is never given back.
 */
import type { BufferSource } from "./reusedBuffer.ts";
import { byteModule, MAX_BUFFER, type WasmMemory } from "./byteSearch.ts";

const PAGE = 64 * 1024;
/** Room after each region for the sixteen-byte stores that may pass its end. */
const SLACK = 64;

type NextText = (p: number, end: number) => number;
type StringEnd = (p: number, end: number) => number;
type UnescapeFold = (p: number, end: number, o: number, f: number) => number;

/** `nextText`: no `"text"` member is left. */
export const NO_MORE_TEXT = -1;

export class TextArena implements BufferSource {
	private view: Buffer;
	private size = 0;

	private constructor(
		private readonly memory: WasmMemory,
		private readonly next: NextText,
		private readonly stringEnd: StringEnd,
		private readonly undo: UnescapeFold,
		private readonly highFlag: { readonly value: number },
	) {
		this.view = Buffer.from(memory.buffer);
	}

	/** An arena, or `undefined` where WebAssembly SIMD is missing (the archives are then read the usual way). */
	static make(): TextArena | undefined {
		const made = byteModule(1);
		if (!made) return undefined;
		const { memory, exports } = made;
		return new TextArena(
			memory,
			exports.next_text as NextText,
			exports.string_end as StringEnd,
			exports.unescape_fold as UnescapeFold,
			exports.high as { readonly value: number },
		);
	}

	/**
	 * The buffer a file of `size` bytes is read into (at the memory's start), with room after it for
	 * its texts (`textsAt`, `foldedAt`). Views of the memory given before are void. A `RangeError` for
	 * a file too large for the module's signed 32-bit addresses (read the usual way).
	 */
	take(size: number): Buffer {
		if (3 * (size + 2 * SLACK) > MAX_BUFFER) throw new RangeError(`${size} bytes is too large for a text arena`);
		this.size = size;
		const needed = this.foldedAt + size + SLACK;
		if (needed > this.view.length) {
			this.memory.grow(Math.ceil((needed - this.view.length) / PAGE));
			this.view = Buffer.from(this.memory.buffer);
		}
		return this.view.subarray(0, size);
	}

	/** The whole memory: the file at 0, the texts as written from `textsAt`, folded from `foldedAt`. */
	get bytes(): Buffer {
		return this.view;
	}

	/** Where the texts of the file taken last are written as they are: room for its size (undone escapes only shrink). */
	get textsAt(): number {
		return align(this.size) + SLACK;
	}

	/** Where their folded copies are written: as much room again. */
	get foldedAt(): number {
		return this.textsAt + align(this.size) + SLACK;
	}

	/**
	 * The index of the opening quote of the next `"text":"…"` member's string at or after `from` (not
	 * inside a string), `NO_MORE_TEXT`, or below that when the bytes are not as this project writes
	 * JSON (`next_text` in `byteSearch.wat`).
	 */
	nextText(from: number, end: number): number {
		return this.next(from, end);
	}

	/** The index after the closing quote of the JSON string whose opening quote is at `quote`, or -1 when it is not valid JSON before `end`. */
	stringAfter(quote: number, end: number): number {
		return this.stringEnd(quote + 1, end);
	}

	/**
	 * The JSON string whose opening quote is at `quote` written as UTF-8 at `to` and, A–Z lowered, at
	 * `foldedTo`; how many bytes each got, or -1 (not valid JSON), -2 (a `\u` escape beyond ASCII:
	 * the caller parses the string itself). `high` then says whether a byte beyond ASCII was met.
	 */
	unescapeFold(quote: number, end: number, to: number, foldedTo: number): number {
		return this.undo(quote + 1, end, to, foldedTo);
	}

	/** Whether the last `unescapeFold` met a byte beyond ASCII (that text is folded as a string). */
	get high(): boolean {
		return this.highFlag.value !== 0;
	}
}

function align(n: number): number {
	return (n + 15) & ~15;
}
