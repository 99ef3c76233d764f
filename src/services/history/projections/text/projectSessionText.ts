/**
 * Writing a text projection (the format is `sessionTextFormat.ts`): an archive projected into the
 * sections of its file (`projectSessionText`, pure), then the file's bytes once the archive revision
 * is known (`finishSessionText`).
 */
import { createHash } from "../../model/lazyCrypto.ts";
import type { SessionArchive, SummaryRecord } from "../archive.ts";
import { foldText } from "../../query/fold.ts";
import { sessionInfo } from "../../query/nodeInfo.ts";
import { searchableText } from "../../query/searchIndex.ts";
import { timeMs } from "../../query/text.ts";
import type { QaNode, QaPart } from "../../model/types.ts";
import {
	COPY_KEY_BYTES,
	encodeDocMeta,
	FLAG_COMPLETED,
	FLAG_COPY_KEY,
	FLAG_STALE,
	ROW,
	ROW_BYTES,
	SEPARATOR,
	SESSION_TEXT_FORMAT,
	SESSION_TEXT_VERSION,
	type SessionTextHeader,
	type SessionTextInfo,
	utf8OfOriginal,
	writeOriginal,
} from "./sessionTextFormat.ts";

/** A projection's body, made before the archive revision is known (see `finishSessionText`). */
export interface SessionTextBody {
	readonly sessionId: string;
	readonly info: SessionTextInfo;
	readonly docs: number;
	/** Whether its Q&A have copy keys (`ProjectOptions.copyKeys`). */
	readonly copyKeys: boolean;
	readonly table: Buffer;
	readonly ids: Buffer;
	readonly meta: Buffer;
	readonly text: Buffer;
	readonly original: Buffer;
	/**
	 * The file after its header line (the sections above, back to back), with `headerRoom` bytes
	 * before them: the first `finishSessionText` writes the header line there, so the file's bytes
	 * are made without copying the sections.
	 */
	readonly file: Buffer;
	readonly headerRoom: number;
}

/** Room left for the archive revision in the header line (revisions are a few dozen characters). */
const REVISION_ROOM = 96;

/** Bodies whose header room a `finishSessionText` has used: a second one copies (the first's bytes may still be in use). */
const finished = new WeakSet<Buffer>();

/**
 * A document's bytes in the last body made of it: its folded and original text and its copy key,
 * views into that body. Archives are immutable and share unchanged documents between revisions,
 * so a document object met again is the same text.
 */
export interface DocBytes {
	readonly folded: Buffer;
	readonly original: Buffer;
	readonly copyKey?: Buffer;
}

/**
 * Per document object, its bytes in the last body made with this cache (`projectSessionText`'s
 * `reuse`). Weak: an entry goes with its document, and a body stays only while a live document
 * points into it (the newest body of the session, a previous one while the GC has not run).
 */
export type DocBytesCache = WeakMap<QaNode | SummaryRecord, DocBytes>;

/** How a projection is made (`projectSessionText`). */
export interface ProjectOptions {
	/**
	 * For a session projected again and again (the live one: every appended batch makes a new
	 * archive revision): its unchanged documents are copied from the last body instead of folded,
	 * encoded and hashed again. A 30 MB session took ≈ 50 ms a batch without it.
	 */
	readonly reuse?: DocBytesCache;
	/**
	 * Documents whose bytes are made already (`projectArchiveTexts`): copied, as `reuse`'s are, but
	 * nothing is remembered of them.
	 */
	readonly made?: DocBytesCache;
	/** Gives the buffer the file is made in (a caller that writes it out at once reuses one). */
	readonly alloc?: (size: number) => Buffer;
	/**
	 * Whether its Q&A get copy keys (`copyKey`): only fork de-duplication reads them, so only a
	 * session in a fork chain needs them — one with a parent, which is the default here, or one
	 * that another session names as its parent, which the caller knows (`TextProjection`). Hashing
	 * every Q&A's text was ≈ 0.2 s of rebuilding the bench's 1 GB history, where 5 % of the Q&A are
	 * in such chains.
	 */
	readonly copyKeys?: boolean;
	/** A Q&A part's text, where the archive's `text` is not it (`projectArchiveTexts`): what the session's title is made from. */
	readonly textOf?: (part: QaPart) => string;
}

/**
 * Projects an archive: its documents' folded text and what ranking, filtering and fork
 * de-duplication need. Pure but for `reuse`, which it reads and refreshes. The archive revision
 * goes in later (`finishSessionText`): a write learns it only once the archive is stored.
 */
export function projectSessionText(
	archive: SessionArchive,
	{ reuse, made, alloc = Buffer.allocUnsafe, copyKeys, textOf }: ProjectOptions = {},
): SessionTextBody {
	const withKeys = copyKeys ?? archive.session.parentSessionId !== undefined;
	const docs: (QaNode | SummaryRecord)[] = [...Object.values(archive.nodes), ...Object.values(archive.summaries)];
	const rowOf = new Map<string, number>(docs.map((d, i) => [d.id, i]));
	const known = docs.map((d) => made?.get(d) ?? reuse?.get(d));
	const originals = docs.map((d, i) => (known[i] ? "" : searchableText(d)));
	const foldeds = originals.map((t) => (t === "" ? "" : foldText(t).folded));
	const covered = docs.map((doc) => (isQaDoc(doc) ? [] : coveredQaOf(archive, doc)));
	const metas = docs.map((doc, i) =>
		encodeDocMeta({
			startedAt: doc.startedAt,
			endedAt: doc.endedAt,
			sessionId: doc.sessionId,
			coveredRows: (covered[i] as QaNode[]).map((q) => rowOf.get(q.id) as number),
		}),
	);
	const ids = docs.map((d) => d.id).join("");
	const meta = metas.join("");
	// Every section encoded straight into one buffer of the file's exact size (native byte counts
	// first), each text once: no joined copy of the session's text, and nothing larger than needed
	// held while an ingest's write waits (buffers sized for the worst case tripled a cold ingest's
	// peak memory).
	let textBytes = docs.length;
	let originalBytes = 0;
	for (let i = 0; i < docs.length; i++) {
		const bytes = known[i];
		if (bytes) {
			textBytes += bytes.folded.length;
			originalBytes += bytes.original.length;
			continue;
		}
		const folded = Buffer.byteLength(foldeds[i] as string);
		textBytes += folded;
		originalBytes += foldeds[i] === originals[i] ? folded : Buffer.byteLength(originals[i] as string);
	}
	const parent = archive.session.parentSessionId;
	const due = Object.values(archive.summaries).filter((s) => s.status === "pending" || s.stale === true).length;
	const info: SessionTextInfo = {
		...sessionInfo(archive, textOf),
		summariesDue: due,
		...(parent !== undefined ? { parentSessionId: parent } : {}),
	};
	const sizes = { table: docs.length * ROW_BYTES, ids: Buffer.byteLength(ids), meta: Buffer.byteLength(meta), text: textBytes, original: originalBytes };
	const headerRoom = headerLine(archive.session.sessionId, "", docs.length, sizes, info, withKeys).length + REVISION_ROOM;
	const file = alloc(headerRoom + sizes.table + sizes.ids + sizes.meta + sizes.text + sizes.original);
	let at = headerRoom;
	const section = (length: number) => file.subarray(at, (at += length));
	const table = section(sizes.table).fill(0);
	const idBytes = section(sizes.ids);
	idBytes.write(ids);
	const metaBytes = section(sizes.meta);
	metaBytes.write(meta);
	const text = section(sizes.text);
	const original = section(sizes.original);
	let textAt = 0;
	let originalAt = 0;
	let idAt = 0;
	let metaAt = 0;
	docs.forEach((doc, i) => {
		const row = i * ROW_BYTES;
		const bytes = known[i];
		const textLength = bytes ? bytes.folded.copy(text, textAt) : text.write(foldeds[i] as string, textAt);
		text[textAt + textLength] = SEPARATOR;
		const originalLength = bytes ? bytes.original.copy(original, originalAt) : writeOriginal(original, originals[i] as string, originalAt);
		const idLength = Buffer.byteLength(doc.id);
		const metaLength = Buffer.byteLength(metas[i] as string);
		const key = table.subarray(row + ROW.copyKey, row + ROW.copyKey + COPY_KEY_BYTES);
		let flags = 0;
		if (isQaDoc(doc)) {
			flags = doc.completed ? FLAG_COMPLETED : 0;
			if (withKeys) {
				flags |= FLAG_COPY_KEY;
				if (bytes?.copyKey) bytes.copyKey.copy(key);
				else copyKey(doc, original.subarray(originalAt, originalAt + originalLength)).copy(key);
			}
		} else {
			const qa = covered[i] as QaNode[];
			flags = (qa.every((q) => q.completed) ? FLAG_COMPLETED : 0) | (doc.stale === true ? FLAG_STALE : 0);
		}
		table.writeUInt32LE(textAt, row + ROW.textStart);
		table.writeUInt32LE(textAt + textLength, row + ROW.textEnd);
		table.writeUInt32LE(idAt, row + ROW.idStart);
		table.writeUInt32LE(idLength, row + ROW.idLength);
		table.writeUInt32LE(isQaDoc(doc) ? 0 : doc.level, row + ROW.level);
		table.writeUInt32LE(flags, row + ROW.flags);
		table.writeDoubleLE(timeMs(doc.startedAt), row + ROW.startMs);
		table.writeDoubleLE(timeMs(doc.endedAt), row + ROW.endMs);
		table.writeUInt32LE(originalAt, row + ROW.originalStart);
		table.writeUInt32LE(originalAt + originalLength, row + ROW.originalEnd);
		table.writeUInt32LE(metaAt, row + ROW.metaStart);
		table.writeUInt32LE(metaAt + metaLength, row + ROW.metaEnd);
		reuse?.set(doc, {
			folded: text.subarray(textAt, textAt + textLength),
			original: original.subarray(originalAt, originalAt + originalLength),
			...(withKeys && isQaDoc(doc) ? { copyKey: key } : {}),
		});
		textAt += textLength + 1;
		originalAt += originalLength;
		idAt += idLength;
		metaAt += metaLength;
	});
	return {
		sessionId: archive.session.sessionId,
		info,
		docs: docs.length,
		copyKeys: withKeys,
		table,
		ids: idBytes,
		meta: metaBytes,
		text,
		original,
		file,
		headerRoom,
	};
}

/**
 * The bytes of a projection file: its body with the header naming the archive revision it
 * reflects. The first call on a body writes the header into the room left for it (no copy of the
 * sections); a later one (a live update's overlay, then its write), or a header that does not
 * fit, copies.
 */
export function finishSessionText(body: SessionTextBody, revision: string): Buffer {
	const sizes = { table: body.table.length, ids: body.ids.length, meta: body.meta.length, text: body.text.length, original: body.original.length };
	const line = headerLine(body.sessionId, revision, body.docs, sizes, body.info, body.copyKeys);
	if (line.length <= body.headerRoom && !finished.has(body.file)) {
		finished.add(body.file);
		const at = body.headerRoom - line.length;
		line.copy(body.file, at);
		return body.file.subarray(at);
	}
	return Buffer.concat([line, body.file.subarray(body.headerRoom)]);
}

/** A projection file's header line, with its newline. */
function headerLine(
	sessionId: string,
	revision: string,
	docs: number,
	sizes: { readonly ids: number; readonly meta: number; readonly text: number; readonly original: number },
	info: SessionTextInfo,
	copyKeys: boolean,
): Buffer {
	const header: SessionTextHeader = {
		format: SESSION_TEXT_FORMAT,
		version: SESSION_TEXT_VERSION,
		sessionId,
		revision,
		docs,
		idBytes: sizes.ids,
		metaBytes: sizes.meta,
		textBytes: sizes.text,
		originalBytes: sizes.original,
		...(copyKeys ? {} : { copyKeys: false as const }),
		session: info,
	};
	return Buffer.from(`${JSON.stringify(header)}\n`, "utf8");
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
 * part's length fixed, the joined text fixes each part's (its UTF-8: a lone surrogate as U+FFFD,
 * `utf8OfOriginal`). `lengths`: the parts' texts' lengths (in UTF-16 code units), where the parts do
 * not hold their texts (`projectArchiveTexts`).
 */
export function copyKey(qa: QaNode, joinedText: Uint8Array, lengths: readonly number[] = qa.parts.map((p) => p.text.length)): Buffer {
	const structure = JSON.stringify([qa.entryIds, qa.parts.map((p, i) => [p.kind, p.entryId, p.kind === "reply" ? p.stopReason : null, lengths[i]])]);
	const utf8 = utf8OfOriginal(Buffer.from(joinedText.buffer, joinedText.byteOffset, joinedText.byteLength));
	return createHash("sha256").update(structure).update(utf8).digest().subarray(0, COPY_KEY_BYTES);
}
