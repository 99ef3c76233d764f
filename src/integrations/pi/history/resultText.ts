import { CHILDREN_PAGE_SIZE, lastPageOffset } from "../../../services/history/query/params.ts";
import type { NodeRef, ReadResult, SearchResult, SessionListResult } from "../../../services/history/query/types.ts";
import { refKind, span } from "./viewer.ts";

/**
 * Query results as compact text for a model to read (the tool's `content`) and for print mode.
 * The full object goes in the tool's `details`; this text names what to call next.
 */

export function sessionsText(result: SessionListResult): string {
	if (result.total === 0) return "No sessions in this workspace's history match.";
	if (result.sessions.length === 0) return `${result.total} session(s) match; ${emptyPage(result, "offset")}`;
	const lines = [`Sessions ${result.offset + 1}–${result.offset + result.sessions.length} of ${result.total} (newest first):`];
	for (const s of result.sessions) {
		const extra = [s.incomplete ? `${s.incomplete} incomplete` : "", s.summariesReady ? `${s.summariesReady} summaries` : ""].filter(Boolean).join(", ");
		lines.push(
			`- id=${s.rootId} "${s.title}" ${span(s.firstAt, s.lastAt)} · ${s.qa} Q&A${s.branches > 1 ? ` · ${s.branches} branches` : ""}${extra ? ` · ${extra}` : ""}`,
		);
	}
	lines.push(more(result.nextOffset, "offset"));
	return lines.filter(Boolean).join("\n");
}

export function hitsText(result: SearchResult): string {
	if (result.total === 0) {
		return `No match for "${result.query}". Matching is by shared text (a contiguous, case-insensitive substring): try other words, a shorter phrase, or a word the conversation would have used.`;
	}
	if (result.groups.every((g) => g.hits.length === 0)) return `${result.total} hit(s) for "${result.query}"; ${emptyPage(result, "offset")}`;
	const lines = [`${result.total} hit(s) for "${result.query}"${result.clamped ? " (limit lowered to 50)" : ""}:`];
	for (const group of result.groups) {
		lines.push(group.level === 0 ? "Q&A originals:" : `Level-${group.level} summaries (clues: read the covered Q&A before relying on them):`);
		for (const hit of group.hits) {
			const flags = [hit.completed ? "" : "incomplete", hit.verified === false ? "not in the originals" : "", hit.stale ? "stale" : ""].filter(Boolean);
			lines.push(
				`- id=${hit.id} [${hit.sessionTitle}] ${span(hit.startedAt, hit.endedAt)}${flags.length ? ` (${flags.join(", ")})` : ""}: ${hit.snippet.replace(/\s+/g, " ")}`,
			);
		}
	}
	lines.push(more(result.nextOffset, "offset"));
	return lines.filter(Boolean).join("\n");
}

export function readText(result: ReadResult): string {
	const kind = result.kind === "qa" ? "Q&A" : result.kind === "summary" ? `Level-${result.level} summary` : "Session";
	const flags = [result.ready ? "" : "not generated yet", result.completed ? "" : "includes an unfinished Q&A", result.stale ? "stale" : ""].filter(Boolean);
	const lines = [
		`${kind} id=${result.id} in "${result.sessionTitle}" ${span(result.startedAt, result.endedAt)}${flags.length ? ` (${flags.join("; ")})` : ""}`,
		`Source: session ${result.sessionId}${result.source.entryIds.length ? `, entries ${result.source.entryIds.join(", ")}` : ""}`,
		"",
		result.body === "" ? "(no text)" : result.body,
	];
	if (result.nextOffset !== null) lines.push("", `[body continues: read again with offset=${result.nextOffset} (${result.totalLength} characters in all)]`);
	if (result.parents.length) lines.push("", "Parents:", ...result.parents.map(refLine));
	if (result.children.length)
		lines.push(
			"",
			`Children ${result.childrenOffset + 1}–${result.childrenOffset + result.children.length} of ${result.totalChildren}:`,
			...result.children.map(refLine),
		);
	if (result.totalChildren > 0 && result.children.length === 0)
		lines.push(
			"",
			`Children: ${result.totalChildren}; ${emptyPage({ offset: result.childrenOffset, total: result.totalChildren, limit: CHILDREN_PAGE_SIZE }, "childrenOffset")}`,
		);
	if (result.nextChildrenOffset !== null) lines.push(`[more children: read again with childrenOffset=${result.nextChildrenOffset}]`);
	return lines.join("\n");
}

function refLine(ref: NodeRef): string {
	return `- id=${ref.id} ${refKind(ref)} ${span(ref.startedAt, ref.endedAt)}: ${ref.preview}`;
}

/** Why a page of a non-empty answer is empty: a count (limit 0), or an offset past the end (and where the last page starts). */
function emptyPage(page: { readonly offset: number; readonly total: number; readonly limit: number }, name: string): string {
	if (page.limit === 0) return "none listed (limit=0 counts only).";
	return `none from ${name}=${page.offset}: the last page starts at ${name}=${lastPageOffset(page.total, page.limit)}.`;
}

function more(next: number | null, name: string): string {
	return next === null ? "" : `[more: call again with ${name}=${next}]`;
}
