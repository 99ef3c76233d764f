import { SessionText } from "./sessionText.ts";

/**
 * The heads file (`text/heads.cache`): every session's projection head in one file, so a new
 * process lists sessions, finds a node or starts a scan without opening every projection file.
 * A cache: each entry names its revision and is checked like any held head, and a damaged file is
 * ignored. In three parts, each read only by what needs it (the file runs to megabytes on a big
 * history, and bytes read are what a new process pays for):
 *
 *   header   `PBHEADS3`, then u32 LE: sessions, end of part 1, end of part 2
 *   part 1   per session: its id and its projection's header line   → listing sessions
 *   part 2   per session: its ids section (ids back to back)         → finding a node (`read`)
 *   part 3   per session: its head (header line, table, ids)         → a scan, `watch`
 *
 * Every field is a u32 LE length and its bytes; the parts list the sessions in the same order.
 */
const MAGIC = "PBHEADS3";
const START = 20;
/** Bytes read first: parts 1 and 2 at once for most workspaces. */
export const HEADS_PREFIX = 256 * 1024;

/** How much of the heads file is read: up to the end of part 1, or all of it (`headsHolding` reads parts 1 and 2). */
export type HeadsPart = "headers" | "rows";

export interface HeadsFile {
	/** Per session: its head (`rows`), or only its header line. */
	readonly heads: Map<string, SessionText>;
}

export function encodeHeadsFile(heads: Iterable<SessionText>): Buffer {
	// Sized first, then written into one buffer: each head's bytes copied once (the file runs to
	// megabytes, and fresh memory is slow to touch here).
	const all = [...heads].map((head) => ({
		id: head.sessionId,
		line: head.bytes.subarray(0, head.headerBytes()),
		ids: head.idsBytes(),
		head: head.bytes.subarray(0, head.headBytes()),
	}));
	let one = 0;
	let two = 0;
	let three = 0;
	for (const h of all) {
		one += 8 + Buffer.byteLength(h.id) + h.line.length;
		two += 4 + h.ids.length;
		three += 4 + h.head.length;
	}
	const file = Buffer.allocUnsafe(START + one + two + three);
	file.write(MAGIC, 0, "latin1");
	file.writeUInt32LE(all.length, 8);
	file.writeUInt32LE(START + one, 12);
	file.writeUInt32LE(START + one + two, 16);
	let at = START;
	/** One field: its length as a u32 LE, then its bytes. */
	const put = (bytes: Uint8Array | string) => {
		let length = 0;
		if (typeof bytes === "string") length = file.write(bytes, at + 4, "utf8");
		else {
			file.set(bytes, at + 4);
			length = bytes.length;
		}
		file.writeUInt32LE(length, at);
		at += 4 + length;
	};
	for (const h of all) {
		put(h.id);
		put(h.line);
	}
	for (const h of all) put(h.ids);
	for (const h of all) put(h.head);
	return file;
}

/** For `TextStore.readHeads`' `extent`: how many bytes `part` needs, told the file's first bytes. */
export function headsExtent(part: "headers" | "ids"): (first: Buffer) => number {
	return (first) => (first.length >= START && first.toString("latin1", 0, 8) === MAGIC ? first.readUInt32LE(part === "headers" ? 12 : 16) : first.length);
}

/**
 * Part 1 of the heads file: each session's id and header line, with a reader at the start of part 2;
 * `undefined` when damaged, of another format, or when the bytes end before `needed` (of `ends`).
 * Throws on a field running past the bytes (callers catch).
 */
function readPartOne(bytes: Buffer, needed: (ends: readonly [number, number]) => number) {
	if (bytes.length < START || bytes.toString("latin1", 0, 8) !== MAGIC) return undefined;
	const count = bytes.readUInt32LE(8);
	const ends = [bytes.readUInt32LE(12), bytes.readUInt32LE(16)] as const;
	if (ends[0] > ends[1] || needed(ends) > bytes.length) return undefined;
	const reader = new FieldReader(bytes, START);
	const entries: { id: Buffer; line: Buffer }[] = [];
	for (let i = 0; i < count; i++) entries.push({ id: reader.next(), line: reader.next() });
	return reader.at === ends[0] ? { ends, entries, reader } : undefined;
}

/** The heads file's entries up to `part` (the bytes may end there); `undefined` when damaged or of another format. */
export function parseHeadsFile(bytes: Buffer, part: HeadsPart): HeadsFile | undefined {
	try {
		const one = readPartOne(bytes, (ends) => (part === "headers" ? ends[0] : bytes.length));
		if (!one) return undefined;
		const heads = new Map<string, SessionText>();
		if (part === "rows") {
			one.reader.at = one.ends[1];
			for (const entry of one.entries) {
				const id = entry.id.toString("utf8");
				heads.set(id, SessionText.parse(one.reader.next(), id, "head"));
			}
			return { heads };
		}
		for (const entry of one.entries) {
			const id = entry.id.toString("utf8");
			heads.set(id, SessionText.parse(entry.line, id, "header"));
		}
		return { heads };
	} catch {
		return undefined;
	}
}

/**
 * The sessions a node id may be in, from the heads file's first two parts (what `ids` reads): the
 * session whose id it is, and those whose ids section holds it as bytes (a caller confirms each
 * against its archive). Only their header lines are parsed: `read` in a new process looks for one
 * node, and parsing every session's header line cost it ≈ 15 ms. `undefined` when damaged or of
 * another format.
 */
export function headsHolding(bytes: Buffer, nodeId: string): SessionText[] | undefined {
	try {
		const one = readPartOne(bytes, (ends) => ends[1]);
		if (!one) return undefined;
		const needle = Buffer.from(nodeId, "utf8");
		const out: SessionText[] = [];
		for (const { id, line } of one.entries) {
			const ids = one.reader.next();
			if (id.equals(needle) || ids.includes(needle)) out.push(SessionText.parse(line, id.toString("utf8"), "header"));
		}
		return one.reader.at === one.ends[1] ? out : undefined;
	} catch {
		return undefined;
	}
}

class FieldReader {
	constructor(
		private readonly bytes: Buffer,
		public at: number,
	) {}

	next(): Buffer {
		const length = this.bytes.readUInt32LE(this.at);
		const start = this.at + 4;
		if (start + length > this.bytes.length) throw new RangeError("field runs past the end");
		this.at = start + length;
		return this.bytes.subarray(start, this.at);
	}
}
