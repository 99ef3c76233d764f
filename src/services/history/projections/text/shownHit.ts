import { foldText, originalRange } from "../../query/fold.ts";
import { hitPreview } from "../../query/searchIndex.ts";
import { snippetAround } from "../../query/text.ts";
import type { SearchHit } from "../../query/types.ts";
import type { ScanHit } from "./scanTexts.ts";
import type { DocMeta } from "./sessionTextFormat.ts";

/**
 * A hit as the answer shows it, from the projection alone: the snippet cut from the document's
 * original text around its first match (only this document is folded again), the rest from what
 * the scan copied out of its row, its meta and its session's header. The same hit the plain scan's `hitOf` makes from the
 * archive. `undefined` when the text no longer holds the needle (the file changed meanwhile).
 */
export function shownHit(hit: ScanHit, original: string, meta: DocMeta, needle: string, verified: boolean | undefined): SearchHit | undefined {
	const folded = foldText(original);
	const at = folded.folded.indexOf(needle);
	if (at < 0) return undefined;
	const range = originalRange(original, folded, at, needle.length);
	const snippet = snippetAround(original, range.start, range.end);
	const { level } = hit;
	const common = {
		id: hit.id,
		kind: level === 0 ? ("qa" as const) : ("summary" as const),
		level,
		sessionId: meta.sessionId,
		sessionTitle: hit.head.header.session.title,
		startedAt: meta.startedAt,
		endedAt: meta.endedAt,
		preview: hitPreview(original),
		snippet: snippet.text,
		match: snippet.match,
		ready: true,
		completed: hit.completed,
	};
	if (level === 0) return common;
	return { ...common, verified: verified === true, ...(hit.stale ? { stale: true } : {}) };
}
