/**
 * Archived text shown on a terminal (the CLI's human output, Pi's picker, viewer, collapsed tool
 * results and print mode) is shown, never obeyed: a question can hold anything a person pasted.
 */

/** Bidirectional overrides and isolates: they reorder what follows on screen (`gnp.exe` shown as `exe.png`). */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;
/** C0 controls but tab and newline, DEL, and C1 controls: escape sequences, bells, carriage returns. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Archived text as a terminal can show it without obeying it: control characters become visible
 * (C0 as their Unicode control pictures — ESC as ␛ —, DEL as ␡, C1 and bidirectional controls as
 * `<U+202E>`), so a question that holds an escape sequence cannot clear the screen, set the window
 * title, make a link or reverse the text after it. Tabs and line breaks stay (a CR LF becomes LF).
 * For what a person sees only: `--json`, the tool's text for the model and the archive keep it as it was.
 */
export function printable(text: string): string {
	return text
		.replace(/\r\n/g, "\n")
		.replace(CONTROL, (c) => {
			const code = c.charCodeAt(0);
			if (code < 0x20) return String.fromCharCode(0x2400 + code);
			if (code === 0x7f) return "\u2421";
			return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
		})
		.replace(BIDI, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase()}>`);
}

/**
 * A text on one line as a terminal can show it, cut around its match: what comes before the match,
 * the match, and what comes after, each printable with its whitespace made single spaces (made
 * printable part by part, so a mark put around the match holds the only escapes in the line).
 */
export function matchParts(
	text: string,
	{ start, length }: { readonly start: number; readonly length: number },
): [before: string, match: string, after: string] {
	const flat = (part: string) => printable(part.replace(/\s+/g, " "));
	return [flat(text.slice(0, start)), flat(text.slice(start, start + length)), flat(text.slice(start + length))];
}

/**
 * A hit's snippet on one line as a terminal can show it, its match passed through `mark` (the
 * CLI's ANSI highlight, Pi's reverse video).
 */
export function markedSnippet(
	hit: { readonly snippet: string; readonly match: { readonly start: number; readonly length: number } },
	mark: (match: string) => string,
): string {
	const [before, match, after] = matchParts(hit.snippet, hit.match);
	return before + mark(match) + after;
}

/** Longest query echoed whole, in code points; a longer one (a pasted paragraph) is cut and its length said. */
const QUERY_SHOWN = 80;

/**
 * What of a query a heading or a notice echoes (the CLI's and Pi's, one rule): the query, or its
 * first `QUERY_SHOWN` code points and how many it has when it is longer.
 */
export function echoedQuery(query: string): { readonly text: string; readonly codePoints?: number } {
	const points = Array.from(query);
	return points.length <= QUERY_SHOWN ? { text: query } : { text: points.slice(0, QUERY_SHOWN).join(""), codePoints: points.length };
}

/**
 * A query as a heading, a notice or a title shows it (the CLI's and Pi's): quoted, printable, on one
 * line (a pasted line break or tab shows as ␊ or ␉), a long one cut (`echoedQuery`). Not JSON:
 * `C:\\temp` reads as typed, not with its backslashes doubled.
 */
export function shownQuery(query: string): string {
	const { text, codePoints } = echoedQuery(query);
	const line = printable(text).replace(/[\t\n]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)));
	return codePoints === undefined ? `"${line}"` : `"${line}…" (${codePoints} characters)`;
}
