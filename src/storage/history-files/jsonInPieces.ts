/**
 * `JSON.parse` of a file's bytes that never makes one string of the whole file.
 *
 * Why: an archive is one line of JSON, up to a few MB, nearly always with non-ASCII text. Decoding it
 * whole makes one two-byte V8 string twice its size, which V8 puts in fresh memory of its own (the
 * large-object space) every time: on this machine that decode ran at ≈ 110 MB/s, and it was a third
 * of rebuilding the search text from 105 MB of archives. The same bytes decoded in pieces of a few
 * KB ran at ≈ 800 MB/s, in memory V8 reuses; read, decoded and parsed, the 919 archives of the
 * bench's 1 GB history took 0.88 s instead of 1.42 (docs/architecture.md, "Targets"). So a big object
 * or array is split into its members at the byte level, and each member is decoded and parsed by the
 * native parser on its own.
 *
 * The result is what `JSON.parse` of the whole text gives, key order and duplicate keys included.
 * Anything the splitter does not expect (damaged JSON, a byte-order mark) goes to `JSON.parse` of the
 * whole text, so errors read the same as before. No streaming JSON library was used: those parse
 * every token in JavaScript, several times slower than the native parser this keeps.
 */

/** Below this, a value is decoded and parsed as one piece: strings this small live in V8's reused young memory. */
export const JSON_PIECE_BYTES = 32 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The splitter met something it does not split; the whole text goes to `JSON.parse`. */
export class UnsplittableJson extends Error {}

/** `JSON.parse(bytes.toString("utf8"))`, with big objects and arrays parsed a member at a time. */
export function parseJsonInPieces(bytes: Uint8Array, pieceBytes = JSON_PIECE_BYTES): unknown {
	const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
	if (buffer.length > pieceBytes) {
		try {
			return splitAndParse(buffer, pieceBytes);
		} catch (err) {
			// Damaged somewhere: the native parser over the whole text says where, in its own words.
			if (!(err instanceof UnsplittableJson) && !(err instanceof SyntaxError)) throw err;
		}
	}
	return JSON.parse(buffer.toString("utf8"));
}

/**
 * The split itself, with no fallback: an `UnsplittableJson` or a piece's `SyntaxError` when the
 * bytes are not one JSON value as expected (exported for tests, which must see a split succeed).
 */
export function splitAndParse(bytes: Buffer, pieceBytes: number): unknown {
	const start = skipSpace(bytes, 0);
	return new Pieces(bytes, pieceBytes).value(start, trimSpace(bytes, start, bytes.length));
}

/**
 * The first members of the object that `bytes` begins with (a file's first bytes: the rest may be
 * cut off), parsed, up to and including `last`; `undefined` when the bytes end before it, the
 * object ends without it, or they are not such an object. What reading an archive's `session`
 * from its first few KB needs, without the rest.
 */
export function leadingMembers(bytes: Buffer, last: string): Record<string, unknown> | undefined {
	try {
		const pieces = new Pieces(bytes, Number.POSITIVE_INFINITY);
		const members: Record<string, unknown> = {};
		let at = skipSpace(bytes, 0);
		if (bytes[at] !== OPEN_OBJECT) return undefined;
		at = skipSpace(bytes, at + 1);
		for (;;) {
			const { key, valueStart, valueEnd } = pieces.member(at, bytes.length);
			// (An own property, as `JSON.parse` makes it, whatever the key.)
			Object.defineProperty(members, key, {
				value: JSON.parse(bytes.toString("utf8", valueStart, trimSpace(bytes, valueStart, valueEnd))),
				writable: true,
				enumerable: true,
				configurable: true,
			});
			if (key === last) return members;
			if (bytes[valueEnd] !== COMMA) return undefined;
			at = skipSpace(bytes, valueEnd + 1);
		}
	} catch {
		// Cut off inside a member, or not JSON.
		return undefined;
	}
}

class Pieces {
	constructor(
		private readonly bytes: Buffer,
		private readonly pieceBytes: number,
	) {}

	/** The value in `[start, end)`, which holds nothing but it (no space around it). */
	value(start: number, end: number): unknown {
		const first = this.bytes[start];
		if (end - start <= this.pieceBytes || (first !== OPEN_OBJECT && first !== OPEN_ARRAY)) return JSON.parse(this.bytes.toString("utf8", start, end));
		return first === OPEN_OBJECT ? this.object(start, end) : this.array(start, end);
	}

	private object(start: number, end: number): Record<string, unknown> {
		const bytes = this.bytes;
		const result: Record<string, unknown> = {};
		let at = skipSpace(bytes, start + 1);
		if (bytes[at] === CLOSE_OBJECT) return this.closes(at, end, result);
		for (;;) {
			const { key, valueStart, valueEnd } = this.member(at, end);
			const value = this.value(valueStart, trimSpace(bytes, valueStart, valueEnd));
			// As JSON.parse defines it: an own property even for `__proto__`, the last of a repeated key winning in the first's place.
			if (key === "__proto__") Object.defineProperty(result, key, { value, writable: true, enumerable: true, configurable: true });
			else result[key] = value;
			if (bytes[valueEnd] === CLOSE_OBJECT) return this.closes(valueEnd, end, result);
			at = skipSpace(bytes, valueEnd + 1);
		}
	}

	private array(start: number, end: number): unknown[] {
		const bytes = this.bytes;
		const result: unknown[] = [];
		let at = skipSpace(bytes, start + 1);
		if (bytes[at] === CLOSE_ARRAY) return this.closes(at, end, result);
		for (;;) {
			const valueEnd = this.valueEnd(at, end);
			result.push(this.value(at, trimSpace(bytes, at, valueEnd)));
			if (bytes[valueEnd] === CLOSE_ARRAY) return this.closes(valueEnd, end, result);
			at = skipSpace(bytes, valueEnd + 1);
		}
	}

	/**
	 * The object member whose key's opening quote is at `at`: its key, where its value starts, and
	 * the comma or closing bracket after the value (`valueEnd`).
	 */
	member(at: number, end: number): { readonly key: string; readonly valueStart: number; readonly valueEnd: number } {
		const bytes = this.bytes;
		if (bytes[at] !== QUOTE) throw new UnsplittableJson();
		const keyEnd = stringEnd(bytes, at, end);
		const key = JSON.parse(bytes.toString("utf8", at, keyEnd)) as string;
		const colon = skipSpace(bytes, keyEnd);
		if (bytes[colon] !== COLON) throw new UnsplittableJson();
		const valueStart = skipSpace(bytes, colon + 1);
		return { key, valueStart, valueEnd: this.valueEnd(valueStart, end) };
	}

	/** `result`, when the container closed at `at` is the whole of `[…, end)`. */
	private closes<T>(at: number, end: number, result: T): T {
		if (at + 1 !== end) throw new UnsplittableJson();
		return result;
	}

	/**
	 * Where the member starting at `start` ends: the index of the comma or the closing bracket after
	 * it, at its container's depth. Inside strings it jumps from quote to quote.
	 */
	private valueEnd(start: number, end: number): number {
		const bytes = this.bytes;
		let depth = 0;
		for (let at = start; at < end; at++) {
			const c = bytes[at] as number;
			if (c === QUOTE) at = stringEnd(bytes, at, end) - 1;
			else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
			else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
				if (depth === 0) return at;
				depth--;
			} else if (c === COMMA && depth === 0) return at;
		}
		throw new UnsplittableJson();
	}
}

/** The index just past the closing quote of the string whose opening quote is at `start`. */
function stringEnd(bytes: Buffer, start: number, end: number): number {
	let from = start + 1;
	for (;;) {
		const quote = bytes.indexOf(QUOTE, from);
		if (quote < 0 || quote >= end) throw new UnsplittableJson();
		let slash = quote - 1;
		while (bytes[slash] === BACKSLASH) slash--;
		// An even run of backslashes escapes itself, not the quote.
		if ((quote - 1 - slash) % 2 === 0) return quote + 1;
		from = quote + 1;
	}
}

function isSpace(c: number): boolean {
	return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(bytes: Buffer, at: number): number {
	while (at < bytes.length && isSpace(bytes[at] as number)) at++;
	return at;
}

function trimSpace(bytes: Buffer, start: number, end: number): number {
	while (end > start && isSpace(bytes[end - 1] as number)) end--;
	return end;
}
