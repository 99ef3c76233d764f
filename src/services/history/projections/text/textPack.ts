import type { StoredFileReader } from "../../service/ports.ts";
import { SESSION_TEXT_VERSION } from "./sessionTextFormat.ts";
import type { SessionText } from "./sessionText.ts";

/**
 * The text pack (`text/pack.cache`): many sessions' projection files, whole, back to back in one
 * file. A search reads each packed session's bytes from it instead of opening that session's file
 * (on the bench's 1 GB history, opening, checking and closing 921 files was ≈ 25–30 ms of every
 * search's ≈ 90), and a packed session has no file of its own: the pack is its only copy, so the
 * folded text is on disk once (`text/` was 3.3× the archived text with the pack beside every file,
 * ≈ 2.2× without it), and a rebuild of every session writes one file instead of one per session
 * (creating 919 files took ≈ 0.3–0.7 s of the rebuild on this machine, one file of the same bytes
 * ≈ 50 ms).
 *
 * Derived, like the files: each entry names the archive revision its bytes reflect, and is used
 * only while the archive is still of that revision (the same revision means the same archive, so
 * the same projection bytes). A session's own file, when there is one, is newer than its entry (it
 * is written when the session changes; the pack, when many did) and is read first. A damaged pack,
 * or one of another format or projection version, is not read at all: its sessions are made again
 * from their archives, as missing files are.
 *
 *   entries  per session, its projection file (header line, table, ids, meta, text, original): in
 *            session id order, or as a first ingest stored them (a session made again may appear
 *            twice; the index names its later bytes, the earlier are never read)
 *   index    JSON: `{"format","version","textVersion","entries":[[sessionId, revision, offset, length], …]}`
 *   footer   `PBTPACK1`, then the index's offset as a u48 LE and 2 zero bytes
 */
const FORMAT = "pbot-history-text-pack";
/** 2: entries hold whole files (1: up to the end of the text, beside the files; such a pack is not read). */
const VERSION = 2;
const MAGIC = "PBTPACK1";
const FOOTER = 16;

/** One session's bytes in the pack. */
export interface PackEntry {
	readonly sessionId: string;
	readonly revision: string;
	/** Where its bytes start in the pack. */
	readonly offset: number;
	/** How many: its whole projection file (`SessionText.end`). */
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

	/** The entry holding `head`'s projection (of its revision, whole), if any. */
	entryFor(head: SessionText): PackEntry | undefined {
		const entry = this.entries.get(head.sessionId);
		return entry !== undefined && entry.revision === head.revision && entry.length === head.end ? entry : undefined;
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
