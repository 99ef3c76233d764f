import { Observable, type OperatorFunction } from "rxjs";

/** One complete line of a session file, still as bytes (decoding is the parser's choice). */
export interface SourceLine {
	/** 1-based line number in the file. */
	readonly line: number;
	readonly bytes: Uint8Array;
	/** Byte offset just after this line's newline: where reading resumes. */
	readonly end: number;
	/** False only for a last line without its newline, flushed when the source completed. */
	readonly terminated: boolean;
	/**
	 * The line's length, when it is longer than `maxLineBytes`: its bytes were not kept (`bytes`
	 * is empty) and it is rejected alone; the lines around it are read as usual.
	 */
	readonly oversized?: number;
}

export interface SplitLinesOptions {
	/** Line number of the first line the source delivers (when resuming from a checkpoint). */
	readonly firstLine?: number;
	/** Byte offset of the first byte the source delivers. */
	readonly startOffset?: number;
	/** Longest line kept (default `MAX_LINE_BYTES`); a longer one is passed on as `oversized`, without its bytes. */
	readonly maxLineBytes?: number;
}

/**
 * The longest line read, 128 MB: far above any entry Pi writes (an image attachment is a few MB of
 * base64), and far below what one string can hold (V8's limit is about 512 MB, where decoding the
 * line would throw and lose the whole file).
 */
export const MAX_LINE_BYTES = 128 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Splits byte chunks into lines, one array of lines per chunk.
 *
 * A line without its newline is held until the rest arrives: a live session file is written one
 * `appendFileSync` at a time and a reader can see half a line. When the source completes, a held
 * tail is flushed with `terminated: false`, so the parser can tell a torn line from a bad one.
 * Empty lines are dropped. State is per subscription. A chunk is not kept past the call that
 * delivers it (the lines emitted are views of it, used by the synchronous stages after this one;
 * a held tail is copied), so a source may reuse its buffer.
 */
export function splitLines(options: SplitLinesOptions = {}): OperatorFunction<Uint8Array, SourceLine[]> {
	return (source) =>
		new Observable<SourceLine[]>((subscriber) => {
			// A line still without its newline, in the pieces it arrived in: joined once, when its
			// newline comes. (Joining it to every new chunk copied a long line over and over: a
			// 50 MB line read 64 KB at a time took 20 s.)
			let held: Uint8Array[] = [];
			let heldLength = 0;
			/** File offset of the next byte to arrive. */
			let position = options.startOffset ?? 0;
			let nextLine = options.firstLine ?? 1;
			const maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
			/** The held line passed `maxLine`: its pieces are dropped as they come, only its length counted. */
			let overflowing = false;

			const take = (lines: SourceLine[], bytes: Uint8Array, end: number, terminated: boolean) => {
				if (bytes.length > maxLine) lines.push({ line: nextLine, bytes: EMPTY, end, terminated, oversized: bytes.length });
				else if (bytes.length > 0 && !isBlank(bytes, 0, bytes.length)) lines.push({ line: nextLine, bytes, end, terminated });
			};
			const takeOversized = (lines: SourceLine[], length: number, end: number, terminated: boolean) => {
				lines.push({ line: nextLine, bytes: EMPTY, end, terminated, oversized: length });
				overflowing = false;
			};
			/**
			 * Holds `chunk` from `start` (a line without its newline yet) as a copy (the source may
			 * reuse its buffer), or only counts it once the line is too long.
			 */
			const hold = (chunk: Uint8Array, start: number) => {
				heldLength += chunk.length - start;
				if (overflowing || heldLength > maxLine) {
					overflowing = true;
					held = [];
				} else held.push(copyOf(chunk, start));
			};

			return source.subscribe({
				next(chunk) {
					const base = position;
					position += chunk.length;
					const lines: SourceLine[] = [];
					let start = 0;
					let nl = chunk.indexOf(NEWLINE);
					if (heldLength > 0) {
						if (nl === -1) {
							hold(chunk, 0); // still no newline
							subscriber.next(lines);
							return;
						}
						if (overflowing || heldLength + nl > maxLine) takeOversized(lines, heldLength + nl, base + nl + 1, true);
						else {
							held.push(chunk.subarray(0, nl));
							take(lines, concat(held, heldLength + nl), base + nl + 1, true);
						}
						held = [];
						heldLength = 0;
						nextLine++;
						start = nl + 1;
						nl = chunk.indexOf(NEWLINE, start);
					}
					while (nl !== -1) {
						take(lines, chunk.subarray(start, nl), base + nl + 1, true);
						nextLine++;
						start = nl + 1;
						nl = chunk.indexOf(NEWLINE, start);
					}
					// Copy the tail: holding a view would pin the whole chunk in memory.
					if (start < chunk.length) hold(chunk, start);
					subscriber.next(lines);
				},
				error(err) {
					subscriber.error(err);
				},
				complete() {
					const lines: SourceLine[] = [];
					if (overflowing) takeOversized(lines, heldLength, position, false);
					else if (heldLength > 0) take(lines, concat(held, heldLength), position, false);
					if (lines.length > 0) subscriber.next(lines);
					subscriber.complete();
				},
			});
		});
}

const EMPTY = new Uint8Array(0);

/**
 * A copy of `bytes` from `start`. Not `bytes.slice()`: on a Node `Buffer` that is a view, and the
 * source may reuse its buffer for the next chunk (`readFileChunksReusing` does).
 */
function copyOf(bytes: Uint8Array, start: number): Uint8Array {
	return new Uint8Array(bytes.subarray(start));
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
	if (parts.length === 1 && (parts[0] as Uint8Array).length === length) return parts[0] as Uint8Array;
	const out = new Uint8Array(length);
	let at = 0;
	for (const part of parts) {
		out.set(part, at);
		at += part.length;
	}
	return out;
}

/** A line of only spaces, tabs or a carriage return carries nothing. */
function isBlank(data: Uint8Array, start: number, end: number): boolean {
	for (let i = start; i < end; i++) {
		const c = data[i];
		if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
	}
	return true;
}
