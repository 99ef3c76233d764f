/**
 * How search looks into a document held in memory: its searchable text, folded once and kept per
 * document object. The service scans the text projection on disk instead (`text/`); this is what
 * cuts snippets for the hits it shows, and what the plain scan of archives (`searchHistory`) uses.
 */
import type { SummaryRecord } from "../projections/archive.ts";
import type { QaNode } from "../model/types.ts";
import { foldText, originalRange, type FoldedText } from "./fold.ts";
import { oneLine } from "./text.ts";

/** What search matches: a Q&A original or a summary. */
export type SearchDocument = QaNode | SummaryRecord;

export interface SearchIndex {
	/** The original text a document is searched in (what snippets are cut from). */
	textOf(doc: SearchDocument): string;
	/** Folded offset of the first occurrence of a folded needle in the document, or -1. */
	indexOf(doc: SearchDocument, needle: string): number;
	/** The original UTF-16 range of a folded match. */
	originalRange(doc: SearchDocument, start: number, length: number): { start: number; end: number };
}

/** Between the parts of a Q&A in its searchable text: the parts read as paragraphs. */
export const PART_SEPARATOR = "\n\n";

/**
 * The searchable text of a document: a Q&A's inputs and replies in order (its question,
 * steering, follow-ups and answer — never tool output), a summary's text (empty until ready).
 */
export function searchableText(doc: SearchDocument): string {
	return searchableParts(doc).join(PART_SEPARATOR);
}

/**
 * The texts `searchableText` joins (with `PART_SEPARATOR`): a Q&A's parts' texts, a ready summary's
 * text, nothing for a summary not ready. What a rebuild takes from an archive's bytes instead
 * (`projectArchiveTexts`), where each `text` field names its bytes.
 */
export function searchableParts<T extends SearchDocument>(doc: T): readonly string[] {
	if (isQa(doc)) return doc.parts.map((p) => p.text);
	return doc.status === "ready" && doc.text !== undefined ? [doc.text] : [];
}

/**
 * A hit's lead line: the start of its document's own text — a Q&A's first paragraph (its
 * question, as a rule), a summary's text — so hits of one session are told apart by what they
 * say. From the searchable text alone, so the projection's hits and the plain scan's agree.
 */
export function hitPreview(searchable: string): string {
	const cut = searchable.indexOf(PART_SEPARATOR);
	const lead = oneLine(cut > 0 ? searchable.slice(0, cut) : searchable);
	return lead === "" ? oneLine(searchable) : lead;
}

export function isQa(doc: SearchDocument): doc is QaNode {
	return (doc as QaNode).kind === "qa";
}

/**
 * The scanning index: folds each document once, on first use, and keeps the folded form in a
 * `WeakMap` keyed by the document object. Archives are immutable (immer), so an unchanged node
 * keeps its object across refreshes and is not folded again, and a changed one (a summary that
 * became ready, a Q&A that got its answer) is a new object and is folded anew; the old entry goes
 * with the old object. At most one folded copy per document is kept, and none for a document whose
 * text is already in folded form (the original string is shared).
 */
export function scanSearchIndex(): SearchIndex {
	const cache = new WeakMap<SearchDocument, FoldedText>();
	const foldedOf = (doc: SearchDocument): FoldedText => {
		let entry = cache.get(doc);
		if (!entry) {
			const text = searchableText(doc);
			const folded = foldText(text);
			entry = folded.folded === text && !folded.expansions ? { folded: text } : folded;
			cache.set(doc, entry);
		}
		return entry;
	};
	return {
		textOf: searchableText,
		indexOf: (doc, needle) => foldedOf(doc).folded.indexOf(needle),
		originalRange: (doc, start, length) => originalRange(searchableText(doc), foldedOf(doc), start, length),
	};
}

/** The index the service uses unless given another: one per process, its cache is weak. */
export const defaultSearchIndex: SearchIndex = scanSearchIndex();
