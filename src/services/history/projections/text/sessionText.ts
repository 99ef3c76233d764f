/**
 * Reading a text projection file (the format is `sessionTextFormat.ts`; the writer is
 * `projectSessionText.ts`): its header checked, then accessors over its table, ids, meta and text.
 */
import {
	COPY_KEY_BYTES,
	FLAG_COMPLETED,
	FLAG_COPY_KEY,
	FLAG_STALE,
	parseDocMeta,
	ROW,
	ROW_BYTES,
	SEPARATOR,
	SESSION_TEXT_FORMAT,
	SESSION_TEXT_VERSION,
	type DocMeta,
	type SessionTextHeader,
} from "./sessionTextFormat.ts";
import { ChunkMatcher } from "./chunkMatcher.ts";
import { indexOfBytes } from "../../model/byteSearch.ts";

/** Why a projection file cannot be used (it is then rebuilt from its archive). */
export class SessionTextError extends Error {
	override readonly name = "SessionTextError";
}

/**
 * A projection file, read: its header, and accessors over its table, ids, meta and text. `bytes`
 * holds the file from its start: at least the head (header, table and ids: what listing sessions
 * and finding ids need). The body (meta and text: what a scan needs) is in `bytes` when it was
 * read whole, or in a buffer of its own (`withBody`: a held head and the body read for a scan).
 */
export class SessionText {
	readonly header: SessionTextHeader;
	/** Where the table, ids, meta, text and original sections start in the file. */
	private readonly tableAt: number;
	private readonly idsAt: number;
	readonly metaAt: number;
	readonly textAt: number;
	readonly originalAt: number;
	/** The file's length. */
	readonly end: number;
	/** The buffer holding the meta and text sections, and the file offset it starts at. */
	private readonly body: Buffer | undefined;
	private readonly bodyAt: number;
	/** The rows a scan found for a needle (`withMatches`: the text was searched as it was read, not kept). */
	private matched: { readonly needle: Uint8Array; readonly rows: readonly number[] } | undefined;

	private constructor(
		readonly bytes: Buffer,
		header: SessionTextHeader,
		headerBytes: number,
		body?: { readonly bytes: Buffer; readonly at: number },
	) {
		this.header = header;
		this.tableAt = headerBytes;
		this.idsAt = this.tableAt + header.docs * ROW_BYTES;
		this.metaAt = this.idsAt + header.idBytes;
		this.textAt = this.metaAt + header.metaBytes;
		this.originalAt = this.textAt + header.textBytes;
		this.end = this.originalAt + header.originalBytes;
		if (body) {
			this.body = body.bytes;
			this.bodyAt = body.at;
		} else {
			this.body = bytes.length >= this.originalAt ? bytes : undefined;
			this.bodyAt = 0;
		}
	}

	get sessionId(): string {
		return this.header.sessionId;
	}

	get revision(): string {
		return this.header.revision;
	}

	/** Whether its Q&A have copy keys (made for a session in a fork chain; every projection before the header said so had them). */
	get hasCopyKeys(): boolean {
		return this.header.copyKeys !== false;
	}

	/** The session its archive names as its parent, if any. */
	get parentSessionId(): string | undefined {
		return this.header.session.parentSessionId;
	}

	get docs(): number {
		return this.header.docs;
	}

	/** Whether the table and ids are at hand (not just the header line: what listing sessions needs). */
	get hasRows(): boolean {
		return this.bytes.length >= this.metaAt;
	}

	/** Whether the meta and text sections are at hand (not just the head). */
	get hasText(): boolean {
		return this.body !== undefined;
	}

	/**
	 * Reads a projection file: `whole`, or up to the end of its `text` (what a scan needs), or its
	 * `head` (header, table and ids), or only its `header` line (to learn how long the rest is).
	 * Throws `SessionTextError` when it is not one, of another version, for another session, or
	 * shorter than asked.
	 */
	static parse(bytes: Buffer, expectedSessionId: string, part: "whole" | "text" | "head" | "header"): SessionText {
		const newline = bytes.indexOf(0x0a);
		if (newline < 0) throw new SessionTextError(bytes.length === 0 ? "empty" : "no header line");
		let header: SessionTextHeader;
		try {
			header = JSON.parse(bytes.toString("utf8", 0, newline)) as SessionTextHeader;
		} catch {
			throw new SessionTextError("header is not JSON");
		}
		if (typeof header !== "object" || header === null || header.format !== SESSION_TEXT_FORMAT) throw new SessionTextError("not a pbot text projection");
		if (header.version !== SESSION_TEXT_VERSION) throw new SessionTextError(`version ${String(header.version)}, expected ${SESSION_TEXT_VERSION}`);
		if (header.sessionId !== expectedSessionId) throw new SessionTextError("made for another session");
		for (const key of ["docs", "idBytes", "metaBytes", "textBytes", "originalBytes"] as const) {
			if (!Number.isSafeInteger(header[key]) || header[key] < 0) throw new SessionTextError(`bad ${key}`);
		}
		if (typeof header.revision !== "string" || typeof header.session !== "object" || header.session === null) throw new SessionTextError("bad header");
		return new SessionText(bytes, header, newline + 1).as(bytes, part);
	}

	/**
	 * The same file (its header already read) over `bytes`, which must hold `part` of it: no
	 * second parse of the header when more of the file was read after it.
	 */
	as(bytes: Buffer, part: "whole" | "text" | "head" | "header"): SessionText {
		const text = bytes === this.bytes ? this : new SessionText(bytes, this.header, this.tableAt);
		const needed = { whole: text.end, text: text.originalAt, head: text.metaAt, header: 0 }[part];
		const short = part === "whole" ? bytes.length !== text.end : bytes.length < needed;
		if (short) throw new SessionTextError(`cut short (${bytes.length} of ${text.end} bytes)`);
		if (part !== "header") text.checkTableEnds();
		return text;
	}

	/**
	 * The table's ends checked against the sections (bytes overwritten in place, the file's length
	 * unchanged, would otherwise lose hits without a word or fail a search on a row's meta): the
	 * first row's text starts the section, the last row's text, meta and original end theirs, and
	 * where the text is at hand, the first and last documents' separators are where their rows say.
	 * A few reads a session: a check of every row cost a common word's search ≈ 9 ms (44k rows read
	 * cold); a row used for a hit is checked when its meta or original text is asked for
	 * (`metaRange`, `originalRange`), and a shown hit's text must hold its match. A failure makes
	 * the file damaged (made again from its archive).
	 */
	private checkTableEnds(): void {
		if (!this.hasRows) return;
		const { header } = this;
		if (header.docs === 0) {
			if (header.textBytes !== 0 || header.metaBytes !== 0 || header.originalBytes !== 0) throw new SessionTextError("damaged: sections without rows");
			return;
		}
		const first = this.row(0);
		const last = this.row(header.docs - 1);
		const read = (row: number, field: number) => this.bytes.readUInt32LE(row + field);
		const whole =
			read(first, ROW.textStart) === 0 &&
			read(last, ROW.textEnd) === header.textBytes - 1 &&
			read(last, ROW.metaEnd) === header.metaBytes &&
			read(last, ROW.originalEnd) === header.originalBytes &&
			read(last, ROW.idStart) + read(last, ROW.idLength) === header.idBytes;
		if (!whole) throw new SessionTextError("damaged: the table does not span its sections");
		// (A body may hold only the meta section: a chunked scan's, `withMatches`.)
		if (!this.body || this.body.length < this.originalAt - this.bodyAt) return;
		const text = this.textAt - this.bodyAt;
		if (this.body[text + read(first, ROW.textEnd)] !== SEPARATOR || this.body[text + header.textBytes - 1] !== SEPARATOR)
			throw new SessionTextError("damaged: a document's text does not end where its row says");
	}

	/** `[start, end)` of a row's field pair, checked to lie in its section (`bytes` long), at `at` in the file. */
	private span(doc: number, startField: number, endField: number, at: number, bytes: number): [number, number] {
		const row = this.row(doc);
		const start = this.bytes.readUInt32LE(row + startField);
		const end = this.bytes.readUInt32LE(row + endField);
		if (start > end || end > bytes) throw new SessionTextError(`damaged: row ${doc} points outside its section`);
		return [at + start, at + end];
	}

	/** The file's bytes `[from, to)` from the body at hand (which must hold them). */
	bodySlice(from: number, to: number): Buffer {
		return this.bodyBytes().subarray(from - this.bodyAt, to - this.bodyAt);
	}

	/** This head with its body (the file's `[metaAt, originalAt)`, read for a scan). */
	withBody(body: Buffer): SessionText {
		if (body.length !== this.originalAt - this.metaAt) throw new SessionTextError(`cut short (${body.length} of ${this.originalAt - this.metaAt} body bytes)`);
		const text = new SessionText(this.bytes, this.header, this.tableAt, { bytes: body, at: this.metaAt });
		text.checkTableEnds();
		return text;
	}

	/**
	 * This head with what a chunked scan found (`ChunkMatcher`): the rows whose text holds
	 * `needle`, and the meta section (`[metaAt, textAt)` of the file) for their meta.
	 */
	withMatches(needle: Uint8Array, rows: readonly number[], meta: Buffer): SessionText {
		if (meta.length !== this.textAt - this.metaAt) throw new SessionTextError(`cut short (${meta.length} of ${this.textAt - this.metaAt} meta bytes)`);
		const text = new SessionText(this.bytes, this.header, this.tableAt, { bytes: meta, at: this.metaAt });
		text.matched = { needle, rows };
		return text;
	}

	/** This head with no row matching `needle` (a scan found none): no meta is needed. */
	withoutMatches(needle: Uint8Array): SessionText {
		const text = new SessionText(this.bytes, this.header, this.tableAt);
		text.matched = { needle, rows: [] };
		return text;
	}

	/** A matcher for `needle` over this session's text section, fed in chunks as it is read. */
	matcher(needle: Uint8Array): ChunkMatcher {
		return new ChunkMatcher(needle, this.docs, (doc) => this.textEnd(doc));
	}

	/** The ids section (every row's id, back to back), from the head (which must be at hand). */
	idsBytes(): Buffer {
		return this.bytes.subarray(this.idsAt, this.metaAt);
	}

	/** Bytes of the header line (with its newline): what `parse(…, "header")` needs. */
	headerBytes(): number {
		return this.tableAt;
	}

	/** Bytes of the file up to the end of its ids: what `parse(…, "head")` needs. */
	headBytes(): number {
		return this.metaAt;
	}

	/** Bytes of the file up to the end of its text: what `parse(…, "text")` needs. */
	scanBytes(): number {
		return this.originalAt;
	}

	private row(doc: number): number {
		return this.tableAt + doc * ROW_BYTES;
	}

	level(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc) + ROW.level);
	}

	private flags(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc) + ROW.flags);
	}

	startMs(doc: number): number {
		return this.bytes.readDoubleLE(this.row(doc) + ROW.startMs);
	}

	endMs(doc: number): number {
		return this.bytes.readDoubleLE(this.row(doc) + ROW.endMs);
	}

	id(doc: number): string {
		const row = this.row(doc);
		const at = this.idsAt + this.bytes.readUInt32LE(row + ROW.idStart);
		return this.bytes.toString("utf8", at, at + this.bytes.readUInt32LE(row + ROW.idLength));
	}

	/** Whether a Q&A row is completed; for a summary, whether every Q&A it covers is. */
	completed(doc: number): boolean {
		return (this.flags(doc) & FLAG_COMPLETED) !== 0;
	}

	stale(doc: number): boolean {
		return (this.flags(doc) & FLAG_STALE) !== 0;
	}

	/** The fork-copy key of a Q&A row, as a string usable in a set; `undefined` for summaries. */
	copyKey(doc: number): string | undefined {
		return this.copyKeyBytes(doc)?.toString("latin1");
	}

	/** The same key as its 8 bytes (a view into the rows: copy it to keep it); `undefined` for summaries. */
	copyKeyBytes(doc: number): Buffer | undefined {
		const row = this.row(doc);
		if ((this.bytes.readUInt32LE(row + ROW.flags) & FLAG_COPY_KEY) === 0) return undefined;
		return this.bytes.subarray(row + ROW.copyKey, row + ROW.copyKey + COPY_KEY_BYTES);
	}

	/** Where a row's meta is in the file (`[start, end)`). */
	metaRange(doc: number): [number, number] {
		return this.span(doc, ROW.metaStart, ROW.metaEnd, this.metaAt, this.header.metaBytes);
	}

	/** A row's meta, from the body (which must be at hand). */
	meta(doc: number): DocMeta {
		const [from, to] = this.metaRange(doc);
		try {
			return parseDocMeta(this.bodyBytes().subarray(from - this.bodyAt, to - this.bodyAt));
		} catch (err) {
			if (err instanceof SessionTextError) throw err;
			throw new SessionTextError(`damaged: the meta of row ${doc} is not JSON`);
		}
	}

	/** Where a row's original text is in the file (`[start, end)`). */
	originalRange(doc: number): [number, number] {
		return this.span(doc, ROW.originalStart, ROW.originalEnd, this.originalAt, this.header.originalBytes);
	}

	private bodyBytes(): Buffer {
		if (!this.body) throw new SessionTextError("the text was not read");
		return this.body;
	}

	private textStart(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc) + ROW.textStart);
	}

	private textEnd(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc) + ROW.textEnd);
	}

	/** The documents whose folded text contains `needle` (UTF-8 bytes of a folded query), in table order. */
	matching(needle: Uint8Array): number[] {
		if (this.matched) {
			// (The scan hands in the same needle: compared by identity first, no copy per session.)
			if (this.matched.needle !== needle && !Buffer.from(this.matched.needle).equals(needle)) throw new SessionTextError("searched for another needle");
			return [...this.matched.rows];
		}
		const out: number[] = [];
		if (!this.body || needle.length === 0) return out;
		const body = this.body;
		const textAt = this.textAt - this.bodyAt;
		const end = this.originalAt - this.bodyAt;
		let doc = 0;
		let from = textAt;
		for (;;) {
			const at = indexOfBytes(body, needle, from);
			if (at < 0 || at >= end) return out;
			const offset = at - textAt;
			// Rows are in text order: move to the row whose text holds the match.
			while (doc < this.docs && this.textEnd(doc) <= offset) doc++;
			if (doc >= this.docs) return out;
			out.push(doc);
			from = textAt + this.textEnd(doc) + 1;
		}
	}

	/**
	 * Documents whose UTF-8 text holds a four-byte sequence (a character a surrogate pair writes in
	 * UTF-16) or U+FFFD (how a lone surrogate is written): the only ones a needle with a lone
	 * surrogate can match. Among `docs` when given, else among all.
	 */
	withSurrogates(docs?: readonly number[]): number[] {
		const out: number[] = [];
		if (!this.body) return out;
		const body = this.body;
		const textAt = this.textAt - this.bodyAt;
		const check = (doc: number) => {
			const start = textAt + this.textStart(doc);
			const end = textAt + this.textEnd(doc);
			for (let i = start; i < end; i++) {
				const b = body[i] as number;
				if (b >= 0xf0 || (b === 0xef && body[i + 1] === 0xbf && body[i + 2] === 0xbd)) return true;
			}
			return false;
		};
		if (docs) for (const d of docs) check(d) && out.push(d);
		else for (let d = 0; d < this.docs; d++) check(d) && out.push(d);
		return out;
	}

	/** The row of a node id, or -1. */
	findId(id: string): number {
		const needle = Buffer.from(id, "utf8");
		const { bytes, idsAt, metaAt } = this;
		let from = idsAt;
		for (;;) {
			const at = bytes.indexOf(needle, from);
			if (at < 0 || at + needle.length > metaAt) return -1;
			// Ids are back to back: a match counts only where a row's id starts and ends.
			const doc = this.rowOfIdStart(at - idsAt);
			if (doc >= 0 && bytes.readUInt32LE(this.row(doc) + ROW.idLength) === needle.length) return doc;
			from = at + 1;
		}
	}

	private rowOfIdStart(offset: number): number {
		let lo = 0;
		let hi = this.docs - 1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1;
			const start = this.bytes.readUInt32LE(this.row(mid) + ROW.idStart);
			if (start === offset) return mid;
			if (start < offset) lo = mid + 1;
			else hi = mid - 1;
		}
		return -1;
	}
}
