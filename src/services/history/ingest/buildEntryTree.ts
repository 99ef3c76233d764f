import { Observable, type OperatorFunction } from "rxjs";
import type { MessageLite, ParsedLine, SessionHeaderLine } from "./sessionEntry.ts";
import type { LineRejection } from "../model/types.ts";

/** A message entry placed in the tree of messages (other entry types are transparent). */
export interface MessageNode {
	/** Position in `EntryTree.messages` (file order). */
	readonly index: number;
	/** Native entry id (not unique if the file repeats ids). */
	readonly entryId: string;
	/** Index of the nearest message above this one, or -1 for a root. */
	readonly parent: number;
	readonly line: number;
	readonly at: string;
	readonly message: MessageLite;
}

/** A snapshot of a session file's entry tree, reduced to its messages. */
export interface EntryTree {
	readonly header?: SessionHeaderLine;
	/** Message entries in file order; parents always come before their children. */
	readonly messages: readonly MessageNode[];
	/** Latest `/name`. */
	readonly name?: string;
	/** Current label per native entry id. */
	readonly labels: ReadonlyMap<string, string>;
	/** Every rejected line so far (up to `MAX_REJECTIONS`), and how many there were in all. */
	readonly rejections: readonly LineRejection[];
	readonly rejectedCount: number;
	/** A torn last line waiting for the rest, if any. */
	readonly held?: { readonly line: number; readonly bytes: number };
	/** Time of the newest entry seen. */
	readonly lastAt?: string;
}

/** Rejections are recorded one by one up to this many per session; beyond, only counted. */
export const MAX_REJECTIONS = 200;

/**
 * Builds the entry tree incrementally and emits a snapshot after every batch.
 *
 * Repairs that keep reading safe: a `parentId` that names no earlier entry (a dangling parent,
 * as Pi's fork leaves when it drops label entries, or one that names a later entry) falls back
 * to the previous entry in the file. Because a parent must precede its child, a `parentId`
 * cycle cannot form, let alone hang. A repeated id refers to its latest occurrence from then on.
 */
export function buildEntryTree(options: BuildEntryTreeOptions = {}): OperatorFunction<ParsedLine[], EntryTree> {
	const atEnd = options.emit === "end";
	return (source) =>
		new Observable<EntryTree>((subscriber) => {
			let header: SessionHeaderLine | undefined;
			let name: string | undefined;
			let lastAt: string | undefined;
			const labels = new Map<string, string>();
			const messages: MessageNode[] = [];
			const rejections: LineRejection[] = [];
			let rejectedCount = 0;
			/** native id → message anchor (index into `messages`, -1 none) of its latest entry. */
			const anchorById = new Map<string, number>();
			/** Anchor of the previous entry in file order: the fallback parent. */
			let previousAnchor = -1;
			/** A torn last line in the latest batch (only the last batch of a source can have one). */
			let held: EntryTree["held"];

			const snapshot = (): EntryTree => ({
				...(header ? { header } : {}),
				messages: messages.slice(),
				...(name !== undefined ? { name } : {}),
				labels: new Map(labels),
				rejections: rejections.slice(),
				rejectedCount,
				...(held ? { held } : {}),
				...(lastAt !== undefined ? { lastAt } : {}),
			});

			return source.subscribe({
				next(batch) {
					held = undefined;
					for (const item of batch) {
						switch (item.kind) {
							case "header":
								header = item.header;
								break;
							case "rejected":
								rejectedCount++;
								if (rejections.length < MAX_REJECTIONS)
									rejections.push({ line: item.line, reason: item.reason, ...(item.bytes !== undefined ? { bytes: item.bytes } : {}) });
								break;
							case "held":
								held = { line: item.line, bytes: item.bytes };
								break;
							case "entry": {
								const entry = item.entry;
								const id = entry.id as string; // normalizeEntries guarantees an id
								let parentAnchor: number;
								if (entry.parentId === null) parentAnchor = -1;
								else if (entry.parentId !== undefined && entry.parentId !== id && anchorById.has(entry.parentId)) {
									parentAnchor = anchorById.get(entry.parentId) as number;
								} else parentAnchor = previousAnchor;

								const at = timeOf(entry.timestamp, entry.message?.at) ?? lastAt ?? header?.timestamp ?? new Date(0).toISOString();
								if (lastAt === undefined || at > lastAt) lastAt = at;

								let anchor = parentAnchor;
								if (entry.type === "message" && entry.message) {
									anchor = messages.length;
									messages.push({ index: anchor, entryId: id, parent: parentAnchor, line: entry.line, at, message: entry.message });
								} else if (entry.type === "session_info" && entry.name !== undefined) {
									const trimmed = entry.name.trim();
									name = trimmed === "" ? undefined : trimmed;
								} else if (entry.type === "label" && entry.targetId !== undefined) {
									if (entry.label !== undefined && entry.label.trim() !== "") labels.set(entry.targetId, entry.label.trim());
									else labels.delete(entry.targetId);
								}
								anchorById.set(id, anchor);
								previousAnchor = anchor;
								break;
							}
						}
					}
					if (!atEnd) subscriber.next(snapshot());
				},
				error: (err) => subscriber.error(err),
				complete: () => {
					if (atEnd) subscriber.next(snapshot());
					subscriber.complete();
				},
			});
		});
}

export interface BuildEntryTreeOptions {
	/**
	 * `every` (default): a snapshot after every batch, for a live file. `end`: one snapshot when the
	 * source completes (even an empty one), for a whole file: batches are taken as they come, so a
	 * line's parsed entry can go as soon as its batch is placed, instead of the whole file's entries
	 * being gathered first.
	 */
	readonly emit?: "every" | "end";
}

/** ISO time of an entry: its own timestamp, else its message's ms timestamp; invalid ones are ignored. */
function timeOf(timestamp: string | undefined, ms: number | undefined): string | undefined {
	// Pi writes `toISOString()` already: such a string is its own normal form (no Date round trip).
	if (timestamp !== undefined && isNormalIsoTime(timestamp)) return timestamp;
	if (timestamp !== undefined) {
		const t = Date.parse(timestamp);
		if (!Number.isNaN(t)) return new Date(t).toISOString();
	}
	if (ms !== undefined) {
		const d = new Date(ms);
		if (!Number.isNaN(d.getTime())) return d.toISOString();
	}
	return undefined;
}

/**
 * Whether `s` is exactly what `toISOString()` gives for some instant: `YYYY-MM-DDTHH:MM:SS.sssZ`
 * with a day that exists in its month (Date.parse would roll 02-30 over to March) and an hour
 * below 24.
 */
export function isNormalIsoTime(s: string): boolean {
	if (
		s.length !== 24 ||
		s.charCodeAt(4) !== 45 ||
		s.charCodeAt(7) !== 45 ||
		s.charCodeAt(10) !== 84 ||
		s.charCodeAt(13) !== 58 ||
		s.charCodeAt(16) !== 58 ||
		s.charCodeAt(19) !== 46 ||
		s.charCodeAt(23) !== 90
	)
		return false;
	const year = digits(s, 0, 4);
	const month = digits(s, 5, 2);
	const day = digits(s, 8, 2);
	const hour = digits(s, 11, 2);
	const minute = digits(s, 14, 2);
	const second = digits(s, 17, 2);
	const millis = digits(s, 20, 3);
	if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millis < 0)
		return false;
	const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
	const daysInMonth = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
	return day <= daysInMonth;
}

/** The decimal number in `s[at, at + n)`, or -1 if any of it is not a digit. */
function digits(s: string, at: number, n: number): number {
	let value = 0;
	for (let i = at; i < at + n; i++) {
		const d = s.charCodeAt(i) - 48;
		if (d < 0 || d > 9) return -1;
		value = value * 10 + d;
	}
	return value;
}
