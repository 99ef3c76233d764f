import type { InputUnit } from "./summaryInput.ts";

/**
 * Splits a summary's input into segments that fit the model, cutting between units (Q&A or child
 * summaries) and, only for a single unit larger than a segment, between its paragraphs (or, for
 * a paragraph larger than a segment, at a character boundary). Originals are never cut in the
 * archive: only what one call sees.
 */
export function segmentInput(units: readonly InputUnit[], maxChars: number): string[] {
	const limit = Math.max(200, maxChars);
	const pieces = units.flatMap((unit) => (unit.text.length <= limit ? [unit.text] : splitLong(unit.text, limit)));
	return pack(pieces, limit, "\n\n---\n\n");
}

/** A text longer than a segment, cut between paragraphs (and a paragraph too long, anywhere). */
function splitLong(text: string, limit: number): string[] {
	const parts = text.split(/\n\n+/).flatMap((paragraph) => (paragraph.length <= limit ? [paragraph] : hardSplit(paragraph, limit)));
	return pack(parts, limit, "\n\n");
}

/** Joins consecutive pieces while the result stays within `limit`. */
function pack(pieces: readonly string[], limit: number, separator: string): string[] {
	const out: string[] = [];
	let current = "";
	for (const piece of pieces) {
		const joined = current === "" ? piece : `${current}${separator}${piece}`;
		if (joined.length <= limit) current = joined;
		else {
			if (current !== "") out.push(current);
			current = piece;
		}
	}
	if (current !== "") out.push(current);
	return out;
}

/** Cuts at `limit` code units, never between the halves of a surrogate pair. */
function hardSplit(text: string, limit: number): string[] {
	const out: string[] = [];
	for (let start = 0; start < text.length; ) {
		let end = Math.min(text.length, start + limit);
		const code = text.charCodeAt(end - 1);
		if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--;
		out.push(text.slice(start, end));
		start = end;
	}
	return out;
}
