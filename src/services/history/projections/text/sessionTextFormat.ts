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
 *   original each document's searchable text as written (snippets are cut from it)
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
