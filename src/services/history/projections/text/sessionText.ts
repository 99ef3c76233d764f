/**
 * The text projection of one session archive: what a search scans, in a form a new process reads
 * without parsing JSON, and what a hit shows, so that a search reads no archive. Derived from the
 * archive (never the source of truth), it records the archive revision it reflects; a projection
 * whose revision is not the archive's is rebuilt.
 *
 * Layout (all integers little-endian; see docs/archive-format.md):
 *
 *   header   one line of JSON, `\n`-terminated: format, version, session id, archive revision,
 *            section lengths and the session's facts for the session list (`SessionTextInfo`)
 *   table    one 64-byte row per document (every Q&A, every summary — pending ones with no text):
 *              0 textStart u32 · 4 textEnd u32    (in the text section)
 *              8 idStart u32   · 12 idLength u32  (in the ids section)
 *             16 level u32 (0 = Q&A) · 20 flags u32 (`FLAG_…`)
 *             24 startMs f64 · 32 endMs f64
 *             40 copy key: 8 bytes of a hash of the Q&A's entry ids and parts (fork copies)
 *             48 originalStart u32 · 52 originalEnd u32 (in the original section)
 *             56 metaStart u32 · 60 metaEnd u32 (in the meta section)
 *   ids      the documents' node ids, back to back (ASCII)
 *   meta     per document, JSON: `[startedAt, endedAt, sessionId, coveredRows]` (what a shown hit says;
 *            a summary's covered Q&A as row numbers, for `verified`)
 *   text     each document's searchable text, folded as search folds it (`fold.ts`), UTF-8, with
 *            a 0xFF byte after each (never in UTF-8, so no match spans two documents)
 *   original each document's searchable text as written (snippets are cut from it)
 *
 * A scan reads the file up to the end of the text; a shown hit reads its meta and original slice.
 */
import { createHash } from "node:crypto";
import type { SessionArchive, SummaryRecord } from "../archive.ts";
import { foldText } from "../../query/fold.ts";
import { type SessionInfo, sessionInfo } from "../../query/nodeInfo.ts";
import { searchableText } from "../../query/searchIndex.ts";
import { timeMs } from "../../query/text.ts";
import type { QaNode } from "../../model/types.ts";

export const SESSION_TEXT_FORMAT = "pbot-history-text";
/** Raise when the layout, the folding or what is projected changes: older projections are rebuilt. */
export const SESSION_TEXT_VERSION = 2;

export const ROW_BYTES = 64;
const SEPARATOR = 0xff;
/** The row has a copy key (a Q&A). */
const FLAG_COPY_KEY = 1;
/** A completed Q&A; a summary whose covered Q&A are all completed. */
const FLAG_COMPLETED = 2;
/** A summary marked stale. */
const FLAG_STALE = 4;

/** What the session list says about a session: taken from the archive when it is projected. */
export interface SessionTextInfo extends SessionInfo {
	/** Summaries a summary pass would make: pending ones, and ready ones marked stale. */
	readonly summariesDue: number;
	readonly parentSessionId?: string;
	/**
	 * The archive was written by a newer pbot (this version of its format): the session is listed
	 * from its facts, with no Q&A, and every catch-up says so.
	 */
	readonly newerVersion?: number;
}

/** The header line of a projection file. */
export interface SessionTextHeader {
	readonly format: typeof SESSION_TEXT_FORMAT;
	readonly version: typeof SESSION_TEXT_VERSION;
	readonly sessionId: string;
	/** The archive revision this projection reflects (`ArchiveStore.revisions`). */
	readonly revision: string;
	readonly docs: number;
	readonly idBytes: number;
	readonly metaBytes: number;
	readonly textBytes: number;
	readonly originalBytes: number;
	readonly session: SessionTextInfo;
}

/** A projection's body, made before the archive revision is known (see `finishSessionText`). */
export interface SessionTextBody {
	readonly sessionId: string;
	readonly info: SessionTextInfo;
	readonly docs: number;
	readonly table: Buffer;
	readonly ids: Buffer;
	readonly meta: Buffer;
	readonly text: Buffer;
	readonly original: Buffer;
}

/** What a shown hit says that the table does not: its times as written, its session, a summary's covered Q&A rows. */
export interface DocMeta {
	readonly startedAt: string;
	readonly endedAt: string;
	readonly sessionId: string;
	readonly coveredRows: readonly number[];
}

/**
 * Projects an archive: its documents' folded text and what ranking, filtering and fork
 * de-duplication need. Pure. The archive revision goes in later (`finishSessionText`): a write
 * learns it only once the archive is stored.
 */
export function projectSessionText(archive: SessionArchive): SessionTextBody {
	const docs: (QaNode | SummaryRecord)[] = [...Object.values(archive.nodes), ...Object.values(archive.summaries)];
	const rowOf = new Map<string, number>(docs.map((d, i) => [d.id, i]));
	const table = Buffer.alloc(docs.length * ROW_BYTES);
	const originals = docs.map(searchableText);
	const foldeds = originals.map((t) => (t === "" ? "" : foldText(t).folded));
	// Encoded straight into buffers of their exact size (a native byte count first), each text once:
	// no joined copy of the session's text, and nothing larger than needed held while an ingest's
	// write waits (buffers sized for the worst case tripled a cold ingest's peak memory).
	let textBytes = docs.length;
	let originalBytes = 0;
	for (let i = 0; i < docs.length; i++) {
		const folded = Buffer.byteLength(foldeds[i] as string);
		textBytes += folded;
		originalBytes += foldeds[i] === originals[i] ? folded : Buffer.byteLength(originals[i] as string);
	}
	const text = Buffer.allocUnsafe(textBytes);
	const original = Buffer.allocUnsafe(originalBytes);
	const ids: string[] = [];
	const metas: string[] = [];
	let textAt = 0;
	let originalAt = 0;
	let idAt = 0;
	let metaAt = 0;
	docs.forEach((doc, i) => {
		const row = i * ROW_BYTES;
		const source = originals[i] as string;
		const folded = foldeds[i] as string;
		const textLength = text.write(folded, textAt);
		text[textAt + textLength] = SEPARATOR;
		const originalLength = original.write(source, originalAt);
		const idLength = Buffer.byteLength(doc.id);
		let flags = 0;
		let covered: number[] = [];
		if (isQaDoc(doc)) {
			flags = FLAG_COPY_KEY | (doc.completed ? FLAG_COMPLETED : 0);
			copyKey(doc, original.subarray(originalAt, originalAt + originalLength)).copy(table, row + 40);
		} else {
			const qa = coveredQaOf(archive, doc);
			covered = qa.map((q) => rowOf.get(q.id) as number);
			flags = (qa.every((q) => q.completed) ? FLAG_COMPLETED : 0) | (doc.stale === true ? FLAG_STALE : 0);
		}
		const meta = JSON.stringify([doc.startedAt, doc.endedAt, doc.sessionId, covered]);
		const metaLength = Buffer.byteLength(meta);
		table.writeUInt32LE(textAt, row);
		table.writeUInt32LE(textAt + textLength, row + 4);
		table.writeUInt32LE(idAt, row + 8);
		table.writeUInt32LE(idLength, row + 12);
		table.writeUInt32LE(isQaDoc(doc) ? 0 : doc.level, row + 16);
		table.writeUInt32LE(flags, row + 20);
		table.writeDoubleLE(timeMs(doc.startedAt), row + 24);
		table.writeDoubleLE(timeMs(doc.endedAt), row + 32);
		table.writeUInt32LE(originalAt, row + 48);
		table.writeUInt32LE(originalAt + originalLength, row + 52);
		table.writeUInt32LE(metaAt, row + 56);
		table.writeUInt32LE(metaAt + metaLength, row + 60);
		ids.push(doc.id);
		metas.push(meta);
		textAt += textLength + 1;
		originalAt += originalLength;
		idAt += idLength;
		metaAt += metaLength;
	});
	const body = { table, ids: Buffer.from(ids.join(""), "utf8"), meta: Buffer.from(metas.join(""), "utf8"), text, original };
	const due = Object.values(archive.summaries).filter((s) => s.status === "pending" || s.stale === true).length;
	const parent = archive.session.parentSessionId;
	return {
		sessionId: archive.session.sessionId,
		info: { ...sessionInfo(archive), summariesDue: due, ...(parent !== undefined ? { parentSessionId: parent } : {}) },
		docs: docs.length,
		...body,
	};
}

/** The bytes of a projection file: its body with the header naming the archive revision it reflects. */
export function finishSessionText(body: SessionTextBody, revision: string): Buffer {
	const header: SessionTextHeader = {
		format: SESSION_TEXT_FORMAT,
		version: SESSION_TEXT_VERSION,
		sessionId: body.sessionId,
		revision,
		docs: body.docs,
		idBytes: body.ids.length,
		metaBytes: body.meta.length,
		textBytes: body.text.length,
		originalBytes: body.original.length,
		session: body.info,
	};
	return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, "utf8"), body.table, body.ids, body.meta, body.text, body.original]);
}

/** The Q&A a summary covers, at any depth, in order; missing children skipped (as `coveredQa` on a view). */
function coveredQaOf(archive: SessionArchive, summary: SummaryRecord): QaNode[] {
	const out: QaNode[] = [];
	const visit = (ids: readonly string[], depth: number) => {
		for (const id of ids) {
			const qa = archive.nodes[id];
			if (qa) out.push(qa);
			else {
				const child = archive.summaries[id];
				// Depth guard: summary levels are small; a cycle could only come from a damaged archive.
				if (child && depth < 64) visit(child.childIds, depth + 1);
			}
		}
	};
	visit(summary.childIds, 0);
	return out;
}

function isQaDoc(doc: QaNode | SummaryRecord): doc is QaNode {
	return (doc as QaNode).kind === "qa";
}

/**
 * What makes two Q&A the same copy (see `forkDuplicates.ts`): the same entry ids and the same
 * parts (kind, entry id, text, and a reply's stop reason). 8 bytes of SHA-256 over the structure
 * (entry ids, and each part's kind, entry id, stop reason and text length, as JSON) and the UTF-8
 * of the parts' texts joined (`searchableText`, already encoded for the projection): with every
 * part's length fixed, the joined text fixes each part's.
 */
export function copyKey(qa: QaNode, joinedText: Uint8Array): Buffer {
	const structure = JSON.stringify([qa.entryIds, qa.parts.map((p) => [p.kind, p.entryId, p.kind === "reply" ? p.stopReason : null, p.text.length])]);
	return createHash("sha256").update(structure).update(joinedText).digest().subarray(0, 8);
}

/** Reads a row's meta from its bytes (`metaRange`). */
export function parseDocMeta(bytes: Buffer): DocMeta {
	const [startedAt, endedAt, sessionId, coveredRows] = JSON.parse(bytes.toString("utf8")) as [string, string, string, number[]];
	return { startedAt, endedAt, sessionId, coveredRows };
}

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
		return text;
	}

	/** The file's bytes `[from, to)` from the body at hand (which must hold them). */
	bodySlice(from: number, to: number): Buffer {
		return this.bodyBytes().subarray(from - this.bodyAt, to - this.bodyAt);
	}

	/** This head with its body (the file's `[metaAt, originalAt)`, read for a scan). */
	withBody(body: Buffer): SessionText {
		if (body.length !== this.originalAt - this.metaAt) throw new SessionTextError(`cut short (${body.length} of ${this.originalAt - this.metaAt} body bytes)`);
		return new SessionText(this.bytes, this.header, this.tableAt, { bytes: body, at: this.metaAt });
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
		return this.bytes.readUInt32LE(this.row(doc) + 16);
	}

	private flags(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc) + 20);
	}

	startMs(doc: number): number {
		return this.bytes.readDoubleLE(this.row(doc) + 24);
	}

	endMs(doc: number): number {
		return this.bytes.readDoubleLE(this.row(doc) + 32);
	}

	id(doc: number): string {
		const row = this.row(doc);
		const at = this.idsAt + this.bytes.readUInt32LE(row + 8);
		return this.bytes.toString("utf8", at, at + this.bytes.readUInt32LE(row + 12));
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
		const row = this.row(doc);
		if ((this.bytes.readUInt32LE(row + 20) & FLAG_COPY_KEY) === 0) return undefined;
		return this.bytes.toString("latin1", row + 40, row + 48);
	}

	/** Where a row's meta is in the file (`[start, end)`). */
	metaRange(doc: number): [number, number] {
		const row = this.row(doc);
		return [this.metaAt + this.bytes.readUInt32LE(row + 56), this.metaAt + this.bytes.readUInt32LE(row + 60)];
	}

	/** A row's meta, from the body (which must be at hand). */
	meta(doc: number): DocMeta {
		const [from, to] = this.metaRange(doc);
		return parseDocMeta(this.bodyBytes().subarray(from - this.bodyAt, to - this.bodyAt));
	}

	/** Where a row's original text is in the file (`[start, end)`). */
	originalRange(doc: number): [number, number] {
		const row = this.row(doc);
		return [this.originalAt + this.bytes.readUInt32LE(row + 48), this.originalAt + this.bytes.readUInt32LE(row + 52)];
	}

	private bodyBytes(): Buffer {
		if (!this.body) throw new SessionTextError("the text was not read");
		return this.body;
	}

	private textStart(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc));
	}

	private textEnd(doc: number): number {
		return this.bytes.readUInt32LE(this.row(doc) + 4);
	}

	/** The documents whose folded text contains `needle` (UTF-8 bytes of a folded query), in table order. */
	matching(needle: Uint8Array): number[] {
		const out: number[] = [];
		if (!this.body || needle.length === 0) return out;
		const body = this.body;
		const textAt = this.textAt - this.bodyAt;
		const end = this.originalAt - this.bodyAt;
		let doc = 0;
		let from = textAt;
		for (;;) {
			const at = body.indexOf(needle, from);
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
			if (doc >= 0 && bytes.readUInt32LE(this.row(doc) + 12) === needle.length) return doc;
			from = at + 1;
		}
	}

	private rowOfIdStart(offset: number): number {
		let lo = 0;
		let hi = this.docs - 1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1;
			const start = this.bytes.readUInt32LE(this.row(mid) + 8);
			if (start === offset) return mid;
			if (start < offset) lo = mid + 1;
			else hi = mid - 1;
		}
		return -1;
	}
}
