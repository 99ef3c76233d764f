/**
 * A text projection made from an archive whose texts are still JSON in a `TextArena`
 * (`readArchiveTexts`): what a rebuild makes every projection with. The same bytes as
 * `projectSessionText` of the archive parsed whole — a test compares the two over generated
 * archives — without a JavaScript string for most texts:
 *
 * - a text is written as UTF-8 by undoing its JSON escapes (`unescape_fold` in `byteSearch.wat`);
 *   its folded copy, A–Z lowered, is the folded text when every byte is ASCII (`fold.ts` changes
 *   nothing else there);
 * - a document with a byte beyond ASCII is decoded from those bytes and folded as a string, as
 *   `projectSessionText` does (its bytes as written are still the ones copied: valid UTF-8 is what
 *   encoding the decoded string gives back);
 * - a document with a `\u` escape beyond ASCII or with bytes that are not UTF-8 is made from its
 *   texts parsed by `JSON.parse`, exactly as the archive's own parse gives them.
 *
 * On the bench's 1 GB history (83 MB of texts) reading, parsing and projecting the 919 archives
 * took ≈ 1.5 s the usual way (docs/architecture.md, "Where the targets stand").
 */
import type { TextArena } from "../../model/textArena.ts";
import type { QaNode } from "../../model/types.ts";
import { foldText } from "../../query/fold.ts";
import { PART_SEPARATOR, searchableParts } from "../../query/searchIndex.ts";
import type { SessionArchive } from "../archive.ts";
import { copyKey, type DocBytesCache, type ProjectOptions, projectSessionText, type SessionTextBody } from "./projectSessionText.ts";
import { writeOriginal } from "./sessionTextFormat.ts";

/** An archive read into a `TextArena` with its texts left there (`readArchiveTexts`). */
export interface ArchiveTextsRead {
	/**
	 * The archive, checked as any archive is, but each text — a Q&A part's `text`, a summary's — is
	 * the number of its JSON string in `texts` ("0", "1", …), not the text: only
	 * `projectArchiveTexts` reads it, and it is never kept.
	 */
	readonly skeleton: SessionArchive;
	/** Per text, in pairs: the index of its JSON string's opening quote in the arena, and the index after its closing quote. */
	readonly texts: readonly number[];
	/** How many bytes of the arena the archive is. */
	readonly end: number;
	/** The revision of exactly the bytes read. */
	readonly revision: string;
}

/** `PART_SEPARATOR`, between a Q&A's parts, as bytes. */
const SEPARATOR_BYTES = Buffer.from(PART_SEPARATOR, "latin1");

/** A document's texts that could not be made in the arena: each written from a string, here. */
const CHUNK = 1024 * 1024;

/**
 * Bytes written from strings for one projection (documents beyond ASCII, folded as strings), kept
 * until it is made; the chunks are used again by the next (`reset`): fresh memory costs more than
 * the copy on this machine (`ReusedBuffer`).
 */
export class WrittenTexts {
	private readonly chunks: Buffer[] = [];
	private chunk = 0;
	private at = 0;

	/** Forgets what was written: the next projection writes over it. */
	reset(): void {
		this.chunk = 0;
		this.at = 0;
	}

	/** `text` as UTF-8, valid until `reset`; `original`: as the original section holds it (`writeOriginal`: its lone surrogates kept). */
	put(text: string, original = false): Buffer {
		const length = Buffer.byteLength(text);
		const into = length > CHUNK ? Buffer.allocUnsafe(length) : this.room(length);
		if (original) writeOriginal(into, text, 0);
		else into.write(text, 0, "utf8");
		return into;
	}

	/** `length` bytes (at most a chunk) after what was written since `reset`. */
	private room(length: number): Buffer {
		let chunk = this.chunks[this.chunk];
		if (chunk === undefined || this.at + length > chunk.length) {
			if (chunk !== undefined) this.chunk++;
			this.at = 0;
			chunk = this.chunks[this.chunk] ??= Buffer.allocUnsafe(CHUNK);
		}
		this.at += length;
		return chunk.subarray(this.at - length, this.at);
	}
}

/**
 * The projection body of an archive read into `arena` (`ArchiveTextsRead`): the same bytes as
 * `projectSessionText` of the archive as parsed whole. `written` holds what is folded as strings;
 * `alloc` and `copyKeys` as for `projectSessionText`.
 */
export function projectArchiveTexts(
	read: ArchiveTextsRead,
	arena: TextArena,
	written: WrittenTexts,
	{ alloc, copyKeys = false }: Pick<ProjectOptions, "alloc" | "copyKeys"> = {},
): SessionTextBody {
	const { skeleton, texts, end } = read;
	const bytes = arena.bytes;
	written.reset();
	/** A text's JSON string parsed, as the archive's own parse gives it. */
	const textOf = (ref: string): string => {
		const n = textNumber(ref, texts);
		return JSON.parse(bytes.toString("utf8", texts[2 * n] as number, texts[2 * n + 1] as number)) as string;
	};
	const known: DocBytesCache = new WeakMap();
	let to = arena.textsAt;
	let foldedTo = arena.foldedAt;
	for (const doc of [...Object.values(skeleton.nodes), ...Object.values(skeleton.summaries)]) {
		const refs = searchableParts(doc);
		const start = to;
		const foldedStart = foldedTo;
		/** Where each part's bytes end (for its length in a copy key). */
		const ends: number[] = [];
		let high = false;
		let parse = false;
		for (const [k, ref] of refs.entries()) {
			if (k > 0) {
				to += SEPARATOR_BYTES.copy(bytes, to);
				foldedTo += SEPARATOR_BYTES.copy(bytes, foldedTo);
			}
			const n = textNumber(ref, texts);
			const length = arena.unescapeFold(texts[2 * n] as number, end, to, foldedTo);
			if (length === -2) {
				parse = true;
				break;
			}
			if (length < 0) throw new Error(`text ${n} is not a JSON string`);
			high ||= arena.high;
			to += length;
			foldedTo += length;
			ends.push(to);
		}
		let original = bytes.subarray(start, to);
		let folded = bytes.subarray(foldedStart, foldedTo);
		if (high && !parse) {
			const text = original.toString("utf8");
			// A byte that is not UTF-8 decodes to U+FFFD: such a document is made from its parsed texts.
			if (text.includes("\uFFFD")) parse = true;
			else folded = written.put(foldText(text).folded);
		}
		/** The parts' texts' lengths in UTF-16 code units, for a copy key. */
		let lengths: () => number[] = () =>
			ends.map((stop, k) => bytes.toString("utf8", k === 0 ? start : (ends[k - 1] as number) + SEPARATOR_BYTES.length, stop).length);
		if (parse) {
			const parts = refs.map(textOf);
			const text = parts.join(PART_SEPARATOR);
			original = written.put(text, true);
			folded = written.put(foldText(text).folded);
			lengths = () => parts.map((part) => part.length);
			to = start;
			foldedTo = foldedStart;
		}
		const withKey = copyKeys && (doc as QaNode).kind === "qa";
		known.set(doc, { original, folded, ...(withKey ? { copyKey: copyKey(doc as QaNode, original, lengths()) } : {}) });
	}
	return projectSessionText(skeleton, { made: known, copyKeys, textOf: (part) => textOf(part.text), ...(alloc ? { alloc } : {}) });
}

/** The number a skeleton's text holds, checked against the texts read. */
function textNumber(ref: string, texts: readonly number[]): number {
	const n = Number(ref);
	if (!Number.isInteger(n) || n < 0 || 2 * n + 1 >= texts.length) throw new Error(`${JSON.stringify(ref.slice(0, 20))} is not a text's number`);
	return n;
}
