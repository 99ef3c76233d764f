import type { TextStore } from "../../service/ports.ts";
import { indexOfBytes, searchableBuffer } from "../../model/byteSearch.ts";
import { HEADS_PREFIX, headsExtent, headsHolding, type HeadsPart, parseHeadsFile } from "./headsFile.ts";
import type { ChunkMatcher } from "./chunkMatcher.ts";
import type { KeptBodies } from "./keptBodies.ts";
import type { FileRead } from "./projectionPacks.ts";
import { SessionText, SessionTextError } from "./sessionText.ts";
import { type PackEntry, TextPack } from "./textPack.ts";

/** What `searchFile` says of a session whose text does not hold the needle, when it keeps nothing of it. */
export const NOT_FOUND: unique symbol = Symbol("not found");

/** Bytes read first for a projection's head (header, table, ids): enough for most sessions at once. */
const HEAD_READ = 8 * 1024;
/** The scan buffer's first size; it grows to the largest session read. */
const SCAN_BUFFER = 1 << 20;
/**
 * The chunk a search reads and searches at a time: small enough to be searched while it is still
 * in the processor's cache (a whole session read at once is read, then read again from memory;
 * on the bench's 1 GB history chunks of 256 KB–1 MB read and searched 88 MB in ~75 ms, whole
 * sessions in ~95 ms).
 */
const SEARCH_CHUNK = 512 * 1024;

/** The pack as a catch-up reaches it (`StoredTexts.lazyPack`). */
export interface LazyPack {
	get(again?: boolean): Promise<TextPack | undefined>;
	close(): void;
}

/**
 * The stored projection files as `TextProjection` reads them: a session's head, its file up to the
 * end of its text, a held head's body, and the heads file. Files are read into one buffer reused
 * from read to read, so a search streams every session's text through it instead of allocating a
 * buffer per session: what a read returns is valid until the next read, and the projection copies
 * what it keeps (`TextProjection.hold`). When to read is the projection's (its turns); this only reads.
 */
export class StoredTexts {
	/** The pack's index as last parsed, and the file it was parsed from (`openPack`). */
	private packIndex: { readonly identity: string; readonly entries: ReadonlyMap<string, PackEntry> } | undefined;
	/** The pack a search's shown hits read from (`sliceFromPack`). */
	private slicePack: TextPack | undefined;
	/** The reused buffers: a scan's, and a chunked search's chunk, meta and head. */
	private readonly buffers = new Map<"scan" | "chunk" | "meta" | "head", Buffer>();

	/**
	 * @param searchChunk the bytes `search` reads at a time (tests make it small, to cross many chunk seams)
	 * @param kept bodies kept in memory between searches (a resident process's); none: each search reads them
	 */
	constructor(
		private readonly texts: TextStore,
		private readonly searchChunk = SEARCH_CHUNK,
		private readonly kept?: KeptBodies,
	) {}

	/**
	 * The way a catch-up (or a filling of rows) gets to the pack for sessions with no file of their
	 * own: `opened` (a scan's), else the pack opened when a session first asks; `get(true)`, when
	 * that lacks the session, opens it once more (another writer may have replaced it, taking the
	 * session's file) — once per catch-up, not once per such session. `close` closes what it opened
	 * and `opened`.
	 */
	lazyPack(opened?: TextPack): LazyPack {
		let pack = opened;
		let opens = opened ? 1 : 0;
		return {
			get: async (again = false) => {
				if (opens === 0 || (again && opens === 1)) {
					opens++;
					const now = await this.openPack();
					if (pack !== opened) pack?.close();
					pack = now;
				}
				return pack;
			},
			close: () => {
				opened?.close();
				if (pack !== opened) pack?.close();
			},
		};
	}

	/**
	 * A session's stored projection: its head, or (`scan`) everything up to the end of its text,
	 * read into the scan buffer: from its own file, or, when it has none, from its entry in the pack
	 * (`pack.get()`, asked for only then; when that lacks the session, `pack.get(true)`). `undefined`
	 * when there is neither; an error when it cannot be used. `fromFile` is told when the bytes came
	 * from the session's own file, with its identity where the store tells it.
	 */
	async read(id: string, part: "head" | "scan", pack: LazyPack, fromFile?: (file: FileRead) => void): Promise<SessionText | undefined | SessionTextError> {
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
			let identity: string | undefined;
			const options = { length: HEAD_READ, into: this.buffer(HEAD_READ), extent, ...(fromFile ? { identity: (i: string) => (identity = i) } : {}) };
			const own = await this.texts.read(id, options);
			if (own !== undefined) fromFile?.(identity !== undefined ? { identity } : {});
			const bytes = own ?? (await this.fromPack(id, pack, extent));
			if (bytes === undefined) return undefined;
			const wanted = part === "head" ? "head" : "text";
			return header ? header.as(bytes, wanted) : SessionText.parse(bytes, id, wanted);
		} catch (err) {
			return err instanceof SessionTextError ? err : new SessionTextError((err as Error).message);
		}
	}

	/** A packed session's first bytes, as `read` takes them from a file (`extent` says how many). */
	private async fromPack(id: string, packs: LazyPack, extent: (first: Buffer) => number): Promise<Buffer | undefined> {
		let pack = await packs.get();
		let entry = pack?.entries.get(id);
		if (!entry) {
			pack = await packs.get(true);
			entry = pack?.entries.get(id);
		}
		if (!entry || !pack) return undefined;
		const first = pack.read(entry, 0, Math.min(HEAD_READ, entry.length), this.buffer(HEAD_READ));
		if (!first) return undefined;
		const length = Math.min(entry.length, Math.max(first.length, extent(first)));
		return length <= first.length ? first : pack.read(entry, 0, length, this.buffer(length));
	}

	/**
	 * `[start, end)` of a session's projection from the pack (all of those bytes, or `undefined`),
	 * when the pack holds `head`'s revision whole: what a shown hit reads of a session that has no file. The pack stays open for the
	 * search's other hits, until `releaseSlices` (the next search).
	 */
	async sliceFromPack(head: SessionText, start: number, end: number): Promise<Buffer | undefined> {
		this.slicePack ??= await this.openPack();
		const entry = this.slicePack?.entryFor(head);
		return entry ? this.slicePack?.read(entry, start, end - start) : undefined;
	}

	/** Closes the pack the last search's shown hits read (`sliceFromPack`): a new search reads the pack as it is then. */
	releaseSlices(): void {
		this.slicePack?.close();
		this.slicePack = undefined;
	}

	/**
	 * A current head's body (meta and text), read into the scan buffer: the only bytes a scan
	 * needs once the head is held. `undefined` when the file is gone or no longer fits the head
	 * (then it is read again whole). The same revision means the same archive, and so the same
	 * projection bytes, whichever process wrote them: the file (or pack entry) is read from its
	 * start, and its header line must be the head's — whatever the pack's index says, and even if
	 * another process replaced the file since the catch-up looked.
	 */
	async body(head: SessionText, pack?: TextPack): Promise<SessionText | undefined> {
		const kept = this.kept?.text(head);
		if (kept) return kept;
		const length = head.scanBytes();
		try {
			const entry = pack?.entryFor(head);
			const into = this.buffer(length);
			const bytes = entry ? pack?.read(entry, 0, length, into) : await this.texts.read(head.sessionId, { offset: 0, length, into });
			if (!bytes || bytes.length !== length || !sameHeaderLine(bytes, head)) return undefined;
			const body = bytes.subarray(head.headBytes());
			return this.kept?.keep(head, body) ?? head.withBody(body);
		} catch {
			return undefined;
		}
	}

	/**
	 * A session known only by its header line (a new process's scan: the heads file's rows are not
	 * read), searched for `needle` as its file is read from the start, a chunk at a time: its
	 * table and ids, meta and text pass through reused buffers (a hit copies what it needs out of
	 * them; a process that searches again keeps the head, `TextProjection.hold`). Without `keep`
	 * (no head is kept from this search), a session whose text does not hold the needle is
	 * `NOT_FOUND`, and nothing is made for it (nor copied out of it, when it is read in one chunk). The file must still be the one the header
	 * describes (the same header line: the same revision, so the same bytes); else, or when it is
	 * gone or cut short, `undefined`. Read from `pack` when it holds the session at that revision.
	 */
	searchFile(header: SessionText, needle: Uint8Array, pack?: TextPack, keep?: true): Promise<SessionText | undefined>;
	searchFile(header: SessionText, needle: Uint8Array, pack: TextPack | undefined, keep: boolean): Promise<SessionText | typeof NOT_FOUND | undefined>;
	async searchFile(header: SessionText, needle: Uint8Array, pack?: TextPack, keep = true): Promise<SessionText | typeof NOT_FOUND | undefined> {
		const line = header.bytes.subarray(0, header.headerBytes());
		const headBytes = header.headBytes();
		const scanBytes = header.scanBytes();
		const head = this.buffer(headBytes, "head");
		const metaLength = header.textAt - header.metaAt;
		const meta = this.buffer(metaLength, "meta");
		const chunk = this.buffer(Math.max(this.searchChunk, 4 * needle.length), "chunk");
		let rows: SessionText | undefined;
		let matcher: ChunkMatcher | undefined;
		try {
			const entry = pack?.entryFor(header);
			const range = { offset: 0, length: scanBytes };
			const onChunk = (bytes: Buffer, at: number) => {
				if (at < line.length) {
					const n = Math.min(bytes.length, line.length - at);
					if (!bytes.subarray(0, n).equals(line.subarray(at, at + n))) throw new SessionTextError("another revision");
				}
				const end = at + bytes.length;
				if (at < headBytes) bytes.copy(head, at, 0, Math.min(bytes.length, headBytes - at));
				if (at < header.textAt && end > header.metaAt) {
					const from = Math.max(at, header.metaAt);
					bytes.copy(meta, from - header.metaAt, from - at, Math.min(end, header.textAt) - at);
				}
				if (end > header.textAt) {
					rows ??= header.as(head.subarray(0, headBytes), "head");
					matcher ??= rows.matcher(needle);
					const from = Math.max(at, header.textAt);
					matcher.feed(bytes.subarray(from - at), from - header.textAt, end === scanBytes);
				}
			};
			let read: boolean | undefined;
			if (entry && pack && scanBytes <= chunk.length) {
				// Most sessions are one chunk: searched before anything else is copied out of it, so a
				// session without a hit costs a read, a search and a copy of its head (kept by a process
				// that searches again), not its meta nor a matcher.
				const bytes = pack.read(entry, 0, scanBytes, chunk);
				if (!bytes || !sameHeaderLine(bytes, header)) return undefined;
				if (indexOfBytes(bytes, needle, header.textAt) < 0) {
					if (!keep) return NOT_FOUND;
					bytes.copy(head, 0, 0, headBytes);
					return header.as(head.subarray(0, headBytes), "head").withoutMatches(needle);
				}
				onChunk(bytes, 0);
				read = true;
			} else read = entry ? pack?.readChunks(entry, range, chunk, onChunk) : await this.texts.readChunks(header.sessionId, range, chunk, onChunk);
			if (!read) return undefined;
			if (!keep && (matcher === undefined || matcher.rows.length === 0)) return NOT_FOUND;
			rows ??= header.as(head.subarray(0, headBytes), "head");
			return rows.withMatches(needle, matcher?.rows ?? [], meta.subarray(0, metaLength));
		} catch {
			return undefined;
		}
	}

	/** The pack (`textPack.ts`), open until its `close`; `undefined` when there is none or it cannot be used. */
	async openPack(): Promise<TextPack | undefined> {
		const file = await this.texts.openPack?.().catch(() => undefined);
		if (!file) return undefined;
		const pack = TextPack.open(file, this.packIndex);
		this.packIndex = pack && file.identity !== undefined ? { identity: file.identity, entries: pack.entries } : undefined;
		return pack;
	}

	/** The sessions of the heads file that may hold a node id, their header lines parsed (`headsHolding`). */
	async headsHolding(nodeId: string): Promise<SessionText[] | undefined> {
		const bytes = await this.texts.readHeads?.({ length: HEADS_PREFIX, extent: headsExtent("ids") }).catch(() => undefined);
		return bytes && headsHolding(bytes, nodeId);
	}

	/** The heads file, whole or in part (`headsFile.ts`); `undefined` when there is none or it is damaged. */
	async heads(part: HeadsPart): Promise<ReturnType<typeof parseHeadsFile>> {
		const bytes = await this.texts.readHeads?.(part === "rows" ? undefined : { length: HEADS_PREFIX, extent: headsExtent("headers") }).catch(() => undefined);
		return bytes && parseHeadsFile(bytes, part);
	}

	/** A reused buffer of at least `length` bytes: the scan buffer, or a search's chunk, meta or head buffer. */
	private buffer(length: number, which: "scan" | "chunk" | "meta" | "head" = "scan"): Buffer {
		const held = this.buffers.get(which);
		if (held && held.length >= length) return held;
		const size = which === "chunk" ? length : Math.max(length, which === "scan" ? SCAN_BUFFER : 0, (held?.length ?? 0) * 2);
		// The text searched is read into the chunk or scan buffer: made where the byte search runs in WebAssembly.
		const made = (which === "chunk" || which === "scan" ? searchableBuffer(size) : undefined) ?? Buffer.allocUnsafe(size);
		this.buffers.set(which, made);
		return made;
	}
}

/** Whether `bytes` (a projection read from its start) begin with `head`'s header line: the same revision's bytes. */
function sameHeaderLine(bytes: Buffer, head: SessionText): boolean {
	const n = head.headerBytes();
	return bytes.length >= n && bytes.compare(head.bytes, 0, n, 0, n) === 0;
}
