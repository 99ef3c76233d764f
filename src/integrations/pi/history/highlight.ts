import { foldQuery, foldText, originalRange } from "../../../services/history/query/fold.ts";

/**
 * `text` with every match of `query` wrapped by `mark`, matched the way search matches (folded:
 * case, width, accents as composed or not, …) and marked on the original characters. An empty
 * query, or one that folds to nothing, marks nothing.
 */
export function highlightMatches(text: string, query: string, mark: (match: string) => string): string {
	const needle = foldQuery(query);
	if (needle === "") return text;
	const folded = foldText(text);
	const out: string[] = [];
	let done = 0;
	for (let at = folded.folded.indexOf(needle); at >= 0; at = folded.folded.indexOf(needle, at + needle.length)) {
		const { start, end } = originalRange(text, folded, at, needle.length);
		if (start < done || end <= start) continue;
		out.push(text.slice(done, start), mark(text.slice(start, end)));
		done = end;
	}
	if (done === 0) return text;
	out.push(text.slice(done));
	return out.join("");
}
