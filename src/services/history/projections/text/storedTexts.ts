import type { TextStore } from "../../service/ports.ts";
import { HEADS_PREFIX, headsExtent, type HeadsPart, parseHeadsFile } from "./headsFile.ts";
import { SessionText, SessionTextError } from "./sessionText.ts";

/** Bytes read first for a projection's head (header, table, ids): enough for most sessions at once. */
const HEAD_READ = 8 * 1024;
/** The scan buffer's first size; it grows to the largest session read. */
const SCAN_BUFFER = 1 << 20;

/**
 * The stored projection files as `TextProjection` reads them: a session's head, its file up to the
 * end of its text, a held head's body, and the heads file. Files are read into one buffer reused
 * from read to read, so a search streams every session's text through it instead of allocating a
 * buffer per session: what a read returns is valid until the next read, and the projection copies
 * what it keeps (`TextProjection.hold`). When to read is the projection's (its turns); this only reads.
 */
export class StoredTexts {
	private scanBuffer: Buffer | undefined;

	constructor(private readonly texts: TextStore) {}

	/**
	 * A session's stored projection: its head, or (`scan`) everything up to the end of its text,
	 * read into the scan buffer. `undefined` when there is none; an error when it cannot be used.
	 */
	async read(id: string, part: "head" | "scan"): Promise<SessionText | undefined | SessionTextError> {
		// The header is parsed once, from the first bytes read; it says how many the caller needs.
		let header: SessionText | undefined;
		const extent = (first: Buffer): number => {
			try {
				header = SessionText.parse(first, id, "header");
				return part === "head" ? header.headBytes() : header.scanBytes();
			} catch {
				return first.length;
			}
		};
		try {
			// Into the reused buffer either way: a head is copied when it is held.
			const bytes = await this.texts.read(id, { length: HEAD_READ, into: this.buffer(HEAD_READ), extent });
			if (bytes === undefined) return undefined;
			const wanted = part === "head" ? "head" : "text";
			return header ? header.as(bytes, wanted) : SessionText.parse(bytes, id, wanted);
		} catch (err) {
			return err instanceof SessionTextError ? err : new SessionTextError((err as Error).message);
		}
	}

	/**
	 * A current head's body (meta and text), read into the scan buffer: the only bytes a scan
	 * needs once the head is held. `undefined` when the file is gone or no longer fits the head
	 * (then it is read again whole). The same revision means the same archive, and so the same
	 * projection bytes, whichever process wrote them.
	 */
	async body(head: SessionText): Promise<SessionText | undefined> {
		const length = head.scanBytes() - head.headBytes();
		try {
			const bytes = await this.texts.read(head.sessionId, { offset: head.headBytes(), length, into: this.buffer(length) });
			return bytes && bytes.length === length ? head.withBody(bytes) : undefined;
		} catch {
			return undefined;
		}
	}

	/** The heads file, whole or in part (`headsFile.ts`); `undefined` when there is none or it is damaged. */
	async heads(part: HeadsPart): Promise<ReturnType<typeof parseHeadsFile>> {
		const bytes = await this.texts.readHeads?.(part === "rows" ? undefined : { length: HEADS_PREFIX, extent: headsExtent(part) }).catch(() => undefined);
		return bytes && parseHeadsFile(bytes, part);
	}

	/** The scan buffer, at least `length` bytes. */
	private buffer(length: number): Buffer {
		if (!this.scanBuffer || this.scanBuffer.length < length)
			this.scanBuffer = Buffer.allocUnsafe(Math.max(length, SCAN_BUFFER, (this.scanBuffer?.length ?? 0) * 2));
		return this.scanBuffer;
	}
}
