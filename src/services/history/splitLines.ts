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
}

export interface SplitLinesOptions {
	/** Line number of the first line the source delivers (when resuming from a checkpoint). */
	readonly firstLine?: number;
	/** Byte offset of the first byte the source delivers. */
	readonly startOffset?: number;
}

const NEWLINE = 0x0a;

/**
 * Splits byte chunks into lines, one array of lines per chunk.
 *
 * A line without its newline is held until the rest arrives: a live session file is written one
 * `appendFileSync` at a time and a reader can see half a line. When the source completes, a held
 * tail is flushed with `terminated: false`, so the parser can tell a torn line from a bad one.
 * Empty lines are dropped. State is per subscription.
 */
export function splitLines(options: SplitLinesOptions = {}): OperatorFunction<Uint8Array, SourceLine[]> {
	return (source) =>
		new Observable<SourceLine[]>((subscriber) => {
			let held: Uint8Array = new Uint8Array(0);
			let heldStart = options.startOffset ?? 0;
			let nextLine = options.firstLine ?? 1;

			return source.subscribe({
				next(chunk) {
					const data = held.length === 0 ? chunk : concat(held, chunk);
					const base = heldStart;
					const lines: SourceLine[] = [];
					let start = 0;
					let nl = data.indexOf(NEWLINE, start);
					while (nl !== -1) {
						if (nl > start && !isBlank(data, start, nl)) {
							lines.push({ line: nextLine, bytes: data.subarray(start, nl), end: base + nl + 1, terminated: true });
						}
						nextLine++;
						start = nl + 1;
						nl = data.indexOf(NEWLINE, start);
					}
					// Copy the tail: holding a view would pin the whole chunk in memory.
					held = start < data.length ? data.slice(start) : new Uint8Array(0);
					heldStart = base + start;
					subscriber.next(lines);
				},
				error(err) {
					subscriber.error(err);
				},
				complete() {
					if (held.length > 0 && !isBlank(held, 0, held.length)) {
						subscriber.next([{ line: nextLine, bytes: held, end: heldStart + held.length, terminated: false }]);
					}
					subscriber.complete();
				},
			});
		});
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
	const out = new Uint8Array(a.length + b.length);
	out.set(a, 0);
	out.set(b, a.length);
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
