import type { StoredFileReader } from "../../service/ports.ts";
import { SESSION_TEXT_VERSION } from "./sessionTextFormat.ts";
import type { SessionText } from "./sessionText.ts";

/**
 * The text pack (`text/pack.cache`): many sessions' projection files, each up to the end of its
 * text (what a scan reads), back to back in one file. A search reads each packed session's bytes
 * from it instead of opening that session's file: on the bench's 1 GB history, opening, checking
 * and closing 921 files was ≈ 25–30 ms of every search's ≈ 90 (Pi's, and a new process's).
 *
 * A cache beside the projection files, which stay what is checked against the archives: each
 * entry names the archive revision its bytes reflect, and is read only for a head of that
 * revision (the same revision means the same archive, so the same projection bytes). A session
 * changed since the pack was made is read from its own file until the next pack; a damaged pack,
 * or one of another projection version, is not read at all.
 *
 *   entries  per session, its projection file's first `length` bytes (header line, table, ids,
 *            meta, text), in session id order
 *   index    JSON: `{"format","version","textVersion","entries":[[sessionId, revision, offset, length], …]}`
 *   footer   `PBTPACK1`, then the index's offset as a u48 LE and 2 zero bytes
 */
const FORMAT = "pbot-history-text-pack";
const VERSION = 1;
const MAGIC = "PBTPACK1";
const FOOTER = 16;

/** One session's bytes in the pack. */
export interface PackEntry {
	readonly sessionId: string;
	readonly revision: string;
	/** Where its bytes start in the pack. */
	readonly offset: number;
	/** How many: its projection file up to the end of its text (`SessionText.scanBytes`). */
	readonly length: number;
}

/** The index and footer that end a pack whose entries take the first `end` bytes. */
export function encodePackIndex(entries: readonly PackEntry[], end: number): Buffer {
	const index = Buffer.from(
		JSON.stringify({
			format: FORMAT,
			version: VERSION,
			textVersion: SESSION_TEXT_VERSION,
			entries: entries.map((e) => [e.sessionId, e.revision, e.offset, e.length]),
		}),
		"utf8",
	);
	const footer = Buffer.alloc(FOOTER);
	footer.write(MAGIC, 0, "latin1");
	footer.writeUIntLE(end, 8, 6);
	return Buffer.concat([index, footer]);
}

/** An open pack: its entries, and reads of an entry's bytes by range. */
export class TextPack {
	private constructor(
		private readonly file: StoredFileReader,
		/** Per session, where its bytes are (the index, parsed). */
		readonly entries: ReadonlyMap<string, PackEntry>,
	) {}

	/**
	 * The pack in `file` (which it then owns), or `undefined` (and `file` closed) when it is
	 * damaged, cut short, of another format or of another projection version. `known`: the index
	 * as parsed from an earlier open, reused when the file is still that one (`identity`): Pi opens
	 * the pack at every search, and parsing its index took ≈ 2–3 ms of each.
	 */
	static open(file: StoredFileReader, known?: { readonly identity: string; readonly entries: ReadonlyMap<string, PackEntry> }): TextPack | undefined {
		if (known !== undefined && file.identity === known.identity) return new TextPack(file, known.entries);
		const entries = TextPack.index(file);
		if (entries) return new TextPack(file, entries);
		file.close();
		return undefined;
	}

	/** The pack's entries, read from its index; `undefined` when it cannot be used. */
	private static index(file: StoredFileReader): Map<string, PackEntry> | undefined {
		try {
			const footer = Buffer.alloc(FOOTER);
			if (file.size < FOOTER || file.read(footer, file.size - FOOTER, FOOTER) !== FOOTER || footer.toString("latin1", 0, 8) !== MAGIC) return undefined;
			const end = footer.readUIntLE(8, 6);
			if (end > file.size - FOOTER) return undefined;
			const index = Buffer.allocUnsafe(file.size - FOOTER - end);
			if (file.read(index, end, index.length) !== index.length) return undefined;
			const parsed = JSON.parse(index.toString("utf8")) as { format?: unknown; version?: unknown; textVersion?: unknown; entries?: unknown };
			if (parsed.format !== FORMAT || parsed.version !== VERSION || parsed.textVersion !== SESSION_TEXT_VERSION || !Array.isArray(parsed.entries))
				return undefined;
			const entries = new Map<string, PackEntry>();
			for (const item of parsed.entries as unknown[]) {
				if (!Array.isArray(item)) return undefined;
				const [sessionId, revision, offset, length] = item as unknown[];
				if (typeof sessionId !== "string" || typeof revision !== "string" || !isCount(offset) || !isCount(length) || offset + length > end) return undefined;
				entries.set(sessionId, { sessionId, revision, offset, length });
			}
			return entries;
		} catch {
			return undefined;
		}
	}

	/** The entry holding `head`'s projection (its revision, up to the end of its text), if any. */
	entryFor(head: SessionText): PackEntry | undefined {
		const entry = this.entries.get(head.sessionId);
		return entry !== undefined && entry.revision === head.revision && entry.length === head.scanBytes() ? entry : undefined;
	}

	/** How many of `heads` the pack does not hold (each read from its own file). */
	missing(heads: Iterable<SessionText>): number {
		let count = 0;
		for (const head of heads) if (this.entryFor(head) === undefined) count++;
		return count;
	}

	/**
	 * Reads `[offset, offset + length)` of an entry a chunk at a time through `into`, as
	 * `TextStore.readChunks` reads a file (offsets are the entry's, as in the session's file).
	 * `false` when the pack ends before.
	 */
	readChunks(
		entry: PackEntry,
		range: { readonly offset: number; readonly length: number },
		into: Buffer,
		onChunk: (bytes: Buffer, at: number) => void,
	): boolean {
		const { offset, length } = range;
		if (offset + length > entry.length) return false;
		for (let done = 0; done < length; ) {
			const got = this.file.read(into, entry.offset + offset + done, Math.min(into.length, length - done));
			if (got === 0) return false;
			onChunk(into.subarray(0, got), offset + done);
			done += got;
		}
		return true;
	}

	/** `length` bytes of an entry from `offset`, into `into` when they fit; `undefined` when the pack ends before. */
	read(entry: PackEntry, offset: number, length: number, into?: Buffer): Buffer | undefined {
		if (offset + length > entry.length) return undefined;
		const bytes = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
		return this.file.read(bytes, entry.offset + offset, length) === length ? bytes : undefined;
	}

	close(): void {
		this.file.close();
	}
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
