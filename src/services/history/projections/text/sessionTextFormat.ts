/**
 * The format of a text projection file, defined once: the writer (`projectSessionText.ts`) and the
 * reader (`sessionText.ts`) both take its offsets, flags and header from here.
 *
 * The text projection of one session archive is what a search scans, in a form a new process reads
 * without parsing JSON, and what a hit shows, so that a search reads no archive. Derived from the
 * archive (never the source of truth), it records the archive revision it reflects; a projection
 * whose revision is not the archive's is rebuilt.
 *
 * Layout (all integers little-endian; see docs/archive-format.md):
 *
 *   header   one line of JSON, `\n`-terminated: format, version, session id, archive revision,
 *            section lengths and the session's facts for the session list (`SessionTextInfo`)
 *   table    one 64-byte row per document (every Q&A, every summary — pending ones with no text),
 *            its fields at the offsets of `ROW`:
 *              0 textStart u32 · 4 textEnd u32    (in the text section)
 *              8 idStart u32   · 12 idLength u32  (in the ids section)
 *             16 level u32 (0 = Q&A) · 20 flags u32 (`FLAG_…`)
 *             24 startMs f64 · 32 endMs f64
 *             40 copy key: 8 bytes of a hash of the Q&A's entry ids and parts (fork copies; only
 *                in a session in a fork chain: else zero, and `FLAG_COPY_KEY` unset)
 *             48 originalStart u32 · 52 originalEnd u32 (in the original section)
 *             56 metaStart u32 · 60 metaEnd u32 (in the meta section)
 *   ids      the documents' node ids, back to back (ASCII)
 *   meta     per document, JSON: `[startedAt, endedAt, sessionId, coveredRows]` (what a shown hit says;
 *            a summary's covered Q&A as row numbers, for `verified`)
 *   text     each document's searchable text, folded as search folds it (`fold.ts`), UTF-8, with
 *            a 0xFF byte after each (never in UTF-8, so no match spans two documents)
 *   original each document's searchable text as written (snippets are cut from it): UTF-8, but a
 *            lone surrogate (a cut emoji, legal in a JSON string) is written in its own three bytes
 *            (ED A0–BF xx, as WTF-8 does), not as U+FFFD, so the text reads back as the archive
 *            holds it (`writeOriginal`, `readOriginal`); in the text section it is U+FFFD. (No new
 *            version for it: a reader that decodes those bytes as UTF-8 gets U+FFFD, as files written
 *            before hold, and copy keys hash the text's UTF-8 either way: `utf8OfOriginal`.)
 *
 * A scan reads the file up to the end of the text; a shown hit reads its meta and original slice.
 */
import type { SessionInfo } from "../../query/nodeInfo.ts";

export const SESSION_TEXT_FORMAT = "pbot-history-text";
/** Raise when the layout, the folding or what is projected changes: older projections are rebuilt. */
export const SESSION_TEXT_VERSION = 2;

export const ROW_BYTES = 64;
/** Where each field of a table row starts, in bytes from the row's start (see the layout above). */
export const ROW = {
	textStart: 0,
	textEnd: 4,
	idStart: 8,
	idLength: 12,
	level: 16,
	flags: 20,
	startMs: 24,
	endMs: 32,
	copyKey: 40,
	originalStart: 48,
	originalEnd: 52,
	metaStart: 56,
	metaEnd: 60,
} as const;
/** Bytes of a row's copy key (at `ROW.copyKey`). */
export const COPY_KEY_BYTES = 8;
/** The byte after each document's folded text. */
export const SEPARATOR = 0xff;

/** The row has a copy key (a Q&A of a session in a fork chain). */
export const FLAG_COPY_KEY = 1;
/** A completed Q&A; a summary whose covered Q&A are all completed. */
export const FLAG_COMPLETED = 2;
/** A summary marked stale. */
export const FLAG_STALE = 4;

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
	/**
	 * `false`: its Q&A have no copy keys (`FLAG_COPY_KEY` unset: keys are made for sessions in a
	 * fork chain only). Absent: they have them (every projection before this field had them).
	 */
	readonly copyKeys?: false;
	readonly session: SessionTextInfo;
}

/** What a shown hit says that the table does not: its times as written, its session, a summary's covered Q&A rows. */
export interface DocMeta {
	readonly startedAt: string;
	readonly endedAt: string;
	readonly sessionId: string;
	readonly coveredRows: readonly number[];
}

/** A row's meta as the meta section holds it. */
export function encodeDocMeta(meta: DocMeta): string {
	return JSON.stringify([meta.startedAt, meta.endedAt, meta.sessionId, meta.coveredRows]);
}

/** Reads a row's meta from its bytes (`metaRange`). */
export function parseDocMeta(bytes: Buffer): DocMeta {
	const [startedAt, endedAt, sessionId, coveredRows] = JSON.parse(bytes.toString("utf8")) as [string, string, string, number[]];
	return { startedAt, endedAt, sessionId, coveredRows };
}

/** A UTF-16 code unit of a surrogate with no partner (what UTF-8 cannot write). */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** U+FFFD in UTF-8: what `Buffer.write` makes of a lone surrogate (and U+FFFD itself). */
const REPLACEMENT = Buffer.from("\ufffd", "utf8");

/** Whether a text has a surrogate with no partner. */
export function hasLoneSurrogate(text: string): boolean {
	LONE_SURROGATE.lastIndex = 0;
	const found = LONE_SURROGATE.test(text);
	// (`matchAll` starts where the shared expression's last search stopped.)
	LONE_SURROGATE.lastIndex = 0;
	return found;
}

/**
 * Writes a document's original text at `at` (room for `Buffer.byteLength(text)` bytes, which a lone
 * surrogate's three bytes do not change): UTF-8, with each lone surrogate in its own three bytes.
 * The string is looked at again only when the bytes hold U+FFFD. Returns the bytes written.
 */
export function writeOriginal(into: Buffer, text: string, at: number): number {
	const length = into.write(text, at, "utf8");
	if (into.subarray(at, at + length).indexOf(REPLACEMENT) < 0 || !hasLoneSurrogate(text)) return length;
	let to = at;
	let from = 0;
	for (const m of text.matchAll(LONE_SURROGATE)) {
		to += into.write(text.slice(from, m.index), to, "utf8");
		const unit = text.charCodeAt(m.index);
		to = into.writeUInt8(0xed, to);
		to = into.writeUInt8(0x80 | ((unit >> 6) & 0x3f), to);
		to = into.writeUInt8(0x80 | (unit & 0x3f), to);
		from = m.index + 1;
	}
	to += into.write(text.slice(from), to, "utf8");
	return to - at;
}

/** Where a lone surrogate's three bytes start in an original's bytes (`writeOriginal`), from `from`; -1 when none. */
function surrogateAt(bytes: Buffer, from: number): number {
	for (let at = bytes.indexOf(0xed, from); at >= 0 && at + 2 < bytes.length; at = bytes.indexOf(0xed, at + 1)) {
		const second = bytes[at + 1] as number;
		const third = bytes[at + 2] as number;
		// (ED 80–9F is UTF-8; ED A0–BF is a surrogate's.)
		if (second >= 0xa0 && second <= 0xbf && third >= 0x80 && third <= 0xbf) return at;
	}
	return -1;
}

/**
 * An original's bytes as plain UTF-8 (each lone surrogate as U+FFFD, the same three bytes long):
 * `bytes` itself when it has none. What copy keys hash, as they did before originals kept them.
 */
export function utf8OfOriginal(bytes: Buffer): Buffer {
	let at = surrogateAt(bytes, 0);
	if (at < 0) return bytes;
	const copy = Buffer.from(bytes);
	for (; at >= 0; at = surrogateAt(bytes, at + 3)) REPLACEMENT.copy(copy, at);
	return copy;
}

/** A document's original text from its bytes (`writeOriginal`): UTF-8, and its lone surrogates as they were. */
export function readOriginal(bytes: Buffer): string {
	let at = surrogateAt(bytes, 0);
	if (at < 0) return bytes.toString("utf8");
	let text = "";
	let from = 0;
	for (; at >= 0; at = surrogateAt(bytes, at + 3)) {
		text += bytes.toString("utf8", from, at) + String.fromCharCode(0xd000 | (((bytes[at + 1] as number) & 0x3f) << 6) | ((bytes[at + 2] as number) & 0x3f));
		from = at + 3;
	}
	return text + bytes.toString("utf8", from);
}
