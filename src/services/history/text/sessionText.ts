/**
 * The text projection of one session archive: what a search scans, in a form a new process reads
 * without parsing JSON. Derived from the archive (never the source of truth), it records the
 * archive revision it reflects; a projection whose revision is not the archive's is rebuilt.
 *
 * Layout (all integers little-endian; see docs/archive-format.md):
 *
 *   header   one line of JSON, `\n`-terminated: format, version, session id, archive revision,
 *            section lengths and the session's facts for the session list (`SessionTextInfo`)
 *   table    one 48-byte row per document (every Q&A, every summary — pending ones with no text):
 *              0 textStart u32 · 4 textEnd u32   (in the text section)
 *              8 idStart u32   · 12 idLength u32 (in the ids section)
 *             16 level u32 (0 = Q&A)  · 20 flags u32 (bit 0: the row has a copy key;
 *                                                      bit 1: a Q&A that is completed)
 *             24 startMs f64 · 32 endMs f64
 *             40 copy key: 8 bytes of a hash of the Q&A's entry ids and parts (fork copies)
 *   ids      the documents' node ids, back to back (ASCII)
 *   text     each document's searchable text, folded as search folds it (`fold.ts`), UTF-8, with
 *            a 0xFF byte after each (never in UTF-8, so no match spans two documents)
 *
 * The text is the folded form only: snippets are cut from the archive's original text, for the
 * hits shown.
 */
import { createHash } from "node:crypto";
import type { SessionArchive, SummaryRecord } from "../archive.ts";
import { foldText } from "../query/fold.ts";
import { sessionInfo } from "../query/nodeInfo.ts";
import { searchableText } from "../query/searchIndex.ts";
import { timeMs } from "../query/text.ts";
import type { QaNode } from "../types.ts";

export const SESSION_TEXT_FORMAT = "pbot-history-text";
/** Raise when the layout, the folding or what is projected changes: older projections are rebuilt. */
export const SESSION_TEXT_VERSION = 1;

export const ROW_BYTES = 48;
const SEPARATOR = 0xff;
const FLAG_COPY_KEY = 1;
const FLAG_COMPLETED = 2;

/** What the session list says about a session: taken from the archive when it is projected. */
export interface SessionTextInfo {
	readonly title: string;
	readonly named: boolean;
	readonly firstAt: string;
	readonly lastAt: string;
	readonly firstMs: number;
	readonly lastMs: number;
	readonly qa: number;
	readonly incomplete: number;
	readonly branches: number;
	readonly summariesReady: number;
	readonly summariesPending: number;
	/** Summaries a summary pass would make: pending ones, and ready ones marked stale. */
	readonly summariesDue: number;
	readonly parentSessionId?: string;
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
	readonly textBytes: number;
	readonly session: SessionTextInfo;
}

/** A projection's body, made before the archive revision is known (see `finishSessionText`). */
export interface SessionTextBody {
	readonly sessionId: string;
	readonly info: SessionTextInfo;
	readonly docs: number;
	readonly table: Buffer;
	readonly ids: Buffer;
	readonly text: Buffer;
}

/**
 * Projects an archive: its documents' folded text and what ranking, filtering and fork
 * de-duplication need. Pure. The archive revision goes in later (`finishSessionText`): a write
 * learns it only once the archive is stored.
 */
export function projectSessionText(archive: SessionArchive): SessionTextBody {
	const docs: (QaNode | SummaryRecord)[] = [...Object.values(archive.nodes), ...Object.values(archive.summaries)];
	const table = Buffer.alloc(docs.length * ROW_BYTES);
	const texts: string[] = [];
	const ids: string[] = [];
	let textAt = 0;
	let idAt = 0;
	docs.forEach((doc, i) => {
		const row = i * ROW_BYTES;
		const text = searchableText(doc);
		const folded = text === "" ? "" : foldText(text).folded;
		const textLength = Buffer.byteLength(folded);
		const idLength = Buffer.byteLength(doc.id);
		table.writeUInt32LE(textAt, row);
		table.writeUInt32LE(textAt + textLength, row + 4);
		table.writeUInt32LE(idAt, row + 8);
		table.writeUInt32LE(idLength, row + 12);
		table.writeUInt32LE(isQaDoc(doc) ? 0 : doc.level, row + 16);
		table.writeDoubleLE(timeMs(doc.startedAt), row + 24);
		table.writeDoubleLE(timeMs(doc.endedAt), row + 32);
		if (isQaDoc(doc)) {
			table.writeUInt32LE(FLAG_COPY_KEY | (doc.completed ? FLAG_COMPLETED : 0), row + 20);
			copyKey(doc).copy(table, row + 40);
		}
		texts.push(folded);
		ids.push(doc.id);
		textAt += textLength + 1;
		idAt += idLength;
	});
	const text = Buffer.allocUnsafe(textAt);
	let at = 0;
	for (const t of texts) {
		at += text.write(t, at);
		text[at++] = SEPARATOR;
	}
	const info = sessionInfo(archive);
	const due = Object.values(archive.summaries).filter((s) => s.status === "pending" || s.stale === true).length;
	const parent = archive.session.parentSessionId;
	return {
		sessionId: archive.session.sessionId,
		info: {
			title: info.title,
			named: info.named,
			firstAt: info.firstAt,
			lastAt: info.lastAt,
			firstMs: info.firstMs,
			lastMs: info.lastMs,
			qa: info.qa,
			incomplete: info.incomplete,
			branches: info.branches,
			summariesReady: info.summariesReady,
			summariesPending: info.summariesPending,
			summariesDue: due,
			...(parent !== undefined ? { parentSessionId: parent } : {}),
		},
		docs: docs.length,
		table,
		ids: Buffer.from(ids.join(""), "utf8"),
		text,
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
		textBytes: body.text.length,
		session: body.info,
	};
	return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, "utf8"), body.table, body.ids, body.text]);
}

function isQaDoc(doc: QaNode | SummaryRecord): doc is QaNode {
	return (doc as QaNode).kind === "qa";
}

/**
 * What makes two Q&A the same copy (see `forkDuplicates.ts`): the same entry ids and the same
 * parts (kind, entry id, text, and a reply's stop reason). 8 bytes of SHA-256 over them, each
 * field length-prefixed (no separator can be forged by the text).
 */
export function copyKey(qa: QaNode): Buffer {
	const hash = createHash("sha256");
	const field = (value: string) => hash.update(`${value.length}:`).update(value);
	field(String(qa.entryIds.length));
	for (const id of qa.entryIds) field(id);
	for (const p of qa.parts) {
		field(p.kind);
		field(p.entryId);
		field(p.kind === "reply" ? p.stopReason : "");
		field(p.text);
	}
	return hash.digest().subarray(0, 8);
}

/** Why a projection file cannot be used (it is then rebuilt from its archive). */
export class SessionTextError extends Error {
	override readonly name = "SessionTextError";
}

/**
 * A projection file, read: its header, and accessors over its table, ids and text. `bytes` may
 * hold only the file's head (header, table and ids: what listing sessions and finding ids need);
 * `hasText` says whether the text section is there.
 */
export class SessionText {
	readonly header: SessionTextHeader;
	/** Where the table, the ids and the text start in `bytes`. */
	private readonly tableAt: number;
	private readonly idsAt: number;
	readonly textAt: number;
	readonly end: number;

	private constructor(
		readonly bytes: Buffer,
		header: SessionTextHeader,
		headerBytes: number,
	) {
		this.header = header;
		this.tableAt = headerBytes;
		this.idsAt = this.tableAt + header.docs * ROW_BYTES;
		this.textAt = this.idsAt + header.idBytes;
		this.end = this.textAt + header.textBytes;
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

	/** Whether the whole file is in `bytes` (not just its head). */
	get hasText(): boolean {
		return this.bytes.length >= this.end;
	}

	/**
	 * Reads a projection file: `whole`, or its `head` (header, table and ids), or only its
	 * `header` line (to learn how long the head is). Throws `SessionTextError` when it is not one,
	 * of another version, for another session, or shorter than asked.
	 */
	static parse(bytes: Buffer, expectedSessionId: string, part: "whole" | "head" | "header"): SessionText {
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
		for (const key of ["docs", "idBytes", "textBytes"] as const) {
			if (!Number.isSafeInteger(header[key]) || header[key] < 0) throw new SessionTextError(`bad ${key}`);
		}
		if (typeof header.revision !== "string" || typeof header.session !== "object" || header.session === null) throw new SessionTextError("bad header");
		const text = new SessionText(bytes, header, newline + 1);
		const short = part === "whole" ? bytes.length !== text.end : part === "head" ? bytes.length < text.textAt : false;
		if (short) throw new SessionTextError(`cut short (${bytes.length} of ${text.end} bytes)`);
		return text;
	}

	/** Bytes of the file up to the end of its ids: what `parse(…, whole = false)` needs. */
	headBytes(): number {
		return this.textAt;
	}

	level(doc: number): number {
		return this.bytes.readUInt32LE(this.tableAt + doc * ROW_BYTES + 16);
	}

	startMs(doc: number): number {
		return this.bytes.readDoubleLE(this.tableAt + doc * ROW_BYTES + 24);
	}

	endMs(doc: number): number {
		return this.bytes.readDoubleLE(this.tableAt + doc * ROW_BYTES + 32);
	}

	id(doc: number): string {
		const row = this.tableAt + doc * ROW_BYTES;
		const at = this.idsAt + this.bytes.readUInt32LE(row + 8);
		return this.bytes.toString("utf8", at, at + this.bytes.readUInt32LE(row + 12));
	}

	/** Whether a Q&A row is completed (false for summaries). */
	completed(doc: number): boolean {
		return (this.bytes.readUInt32LE(this.tableAt + doc * ROW_BYTES + 20) & FLAG_COMPLETED) !== 0;
	}

	/** The fork-copy key of a Q&A row, as a string usable in a set; `undefined` for summaries. */
	copyKey(doc: number): string | undefined {
		const row = this.tableAt + doc * ROW_BYTES;
		if ((this.bytes.readUInt32LE(row + 20) & FLAG_COPY_KEY) === 0) return undefined;
		return this.bytes.toString("latin1", row + 40, row + 48);
	}

	/** The documents whose folded text contains `needle` (UTF-8 bytes of a folded query), in table order. */
	matching(needle: Uint8Array): number[] {
		const out: number[] = [];
		if (!this.hasText || needle.length === 0) return out;
		const { bytes, textAt, end } = this;
		let doc = 0;
		let from = textAt;
		for (;;) {
			const at = bytes.indexOf(needle, from);
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
		if (!this.hasText) return out;
		const { bytes, textAt } = this;
		const check = (doc: number) => {
			const start = textAt + this.textStart(doc);
			const end = textAt + this.textEnd(doc);
			for (let i = start; i < end; i++) {
				const b = bytes[i] as number;
				if (b >= 0xf0 || (b === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd)) return true;
			}
			return false;
		};
		if (docs) for (const d of docs) check(d) && out.push(d);
		else for (let d = 0; d < this.docs; d++) check(d) && out.push(d);
		return out;
	}

	private textStart(doc: number): number {
		return this.bytes.readUInt32LE(this.tableAt + doc * ROW_BYTES);
	}

	private textEnd(doc: number): number {
		return this.bytes.readUInt32LE(this.tableAt + doc * ROW_BYTES + 4);
	}

	/** The row of a node id, or -1. */
	findId(id: string): number {
		const needle = Buffer.from(id, "utf8");
		const { bytes, idsAt, textAt } = this;
		let from = idsAt;
		for (;;) {
			const at = bytes.indexOf(needle, from);
			if (at < 0 || at + needle.length > textAt) return -1;
			// Ids are back to back: a match counts only where a row's id starts and ends.
			const doc = this.rowOfIdStart(at - idsAt);
			if (doc >= 0 && bytes.readUInt32LE(this.tableAt + doc * ROW_BYTES + 12) === needle.length) return doc;
			from = at + 1;
		}
	}

	private rowOfIdStart(offset: number): number {
		let lo = 0;
		let hi = this.docs - 1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1;
			const start = this.bytes.readUInt32LE(this.tableAt + mid * ROW_BYTES + 8);
			if (start === offset) return mid;
			if (start < offset) lo = mid + 1;
			else hi = mid - 1;
		}
		return -1;
	}
}
