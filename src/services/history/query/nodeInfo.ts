/** Facts about sessions and nodes that several answers share: titles, spans, flags, previews. */
import type { SessionArchive, SummaryRecord } from "../projections/archive.ts";
import type { QueryView, ViewNode } from "../projections/queryView.ts";
import type { QaNode, QaPart } from "../model/types.ts";
import { oneLine, timeMs } from "./text.ts";
import type { NodeRef } from "./types.ts";

/** Length of a session title made from its first question. */
export const TITLE_LENGTH = 80;

/** What the session list and every hit say about a session. */
export interface SessionInfo {
	readonly title: string;
	readonly named: boolean;
	readonly firstAt: string;
	readonly lastAt: string;
	readonly firstMs: number;
	readonly lastMs: number;
	readonly qa: number;
	readonly incomplete: number;
	readonly branches: number;
	readonly summariesReady: number;
	readonly summariesPending: number;
}

// Keyed by the archive object: immer gives a changed session a new object, so this never goes stale.
const sessionInfoCache = new WeakMap<SessionArchive, SessionInfo>();

/**
 * `textOf`: a part's text, where the archive's `text` fields are not the texts (a rebuild's
 * `ArchiveTextsRead`); the title is the one text read.
 */
export function sessionInfo(archive: SessionArchive, textOf?: (part: QaPart) => string): SessionInfo {
	let info = sessionInfoCache.get(archive);
	if (!info) {
		info = computeSessionInfo(archive, textOf);
		sessionInfoCache.set(archive, info);
	}
	return info;
}

function computeSessionInfo(archive: SessionArchive, textOf?: (part: QaPart) => string): SessionInfo {
	const nodes = Object.values(archive.nodes);
	const summaries = Object.values(archive.summaries);
	let first: { iso: string; ms: number } = { iso: archive.session.startedAt, ms: timeMs(archive.session.startedAt) };
	let last = first;
	let earliest: QaNode | undefined;
	let earliestMs = 0;
	let incomplete = 0;
	for (const node of nodes) {
		const s = timeMs(node.startedAt);
		const e = timeMs(node.endedAt);
		if (s < first.ms) first = { iso: node.startedAt, ms: s };
		if (e > last.ms) last = { iso: node.endedAt, ms: e };
		if (!node.completed) incomplete++;
		if (!earliest || s < earliestMs || (s === earliestMs && node.id < earliest.id)) {
			earliest = node;
			earliestMs = s;
		}
	}
	const name = archive.session.name?.trim();
	const title = name ? oneLine(name, TITLE_LENGTH) : earliest ? oneLine(questionText(earliest, textOf), TITLE_LENGTH) || "(untitled)" : "(no questions yet)";
	const ready = summaries.filter((s) => s.status === "ready").length;
	return {
		title,
		named: Boolean(name),
		firstAt: first.iso,
		lastAt: last.iso,
		firstMs: first.ms,
		lastMs: last.ms,
		qa: nodes.length,
		incomplete,
		branches: archive.branches.length,
		summariesReady: ready,
		summariesPending: summaries.length - ready,
	};
}

/** The question of a Q&A: its first input (or a note of its images when it has only those). */
export function questionText(qa: QaNode, textOf: (part: QaPart) => string = (part) => part.text): string {
	const input = qa.parts.find((p) => p.kind === "input");
	if (!input) return qa.parts[0] ? textOf(qa.parts[0]) : "";
	const text = textOf(input);
	if (text.trim() === "" && input.images) return `[${input.images} image${input.images === 1 ? "" : "s"}]`;
	return text;
}

/** The Q&A originals a summary covers, at any depth, in order. Missing children are skipped. */
export function coveredQa(view: QueryView, summary: SummaryRecord): QaNode[] {
	const out: QaNode[] = [];
	const visit = (ids: readonly string[], depth: number) => {
		for (const id of ids) {
			const node = view.nodes.get(id);
			if (node?.kind === "qa") out.push(node.qa);
			// Depth guard: summary levels are small; a cycle could only come from a damaged archive.
			else if (node?.kind === "summary" && depth < 64) visit(node.summary.childIds, depth + 1);
		}
	};
	visit(summary.childIds, 0);
	return out;
}

/** A summary is complete when every Q&A under it is. */
export function summaryCompleted(view: QueryView, summary: SummaryRecord): boolean {
	return coveredQa(view, summary).every((qa) => qa.completed);
}

/** The `stale` flag of a summary record, when a later format sets it. */
export function staleFlag(summary: SummaryRecord): { stale?: true } {
	return (summary as { readonly stale?: unknown }).stale === true ? { stale: true } : {};
}

/** One line about a summary: its text, or, while pending, what it will cover. */
export function summaryPreview(view: QueryView, summary: SummaryRecord): string {
	if (summary.status === "ready" && summary.text !== undefined) return oneLine(summary.text);
	const first = coveredQa(view, summary)[0];
	return oneLine(`(not summarized yet) ${first ? questionText(first) : ""}`);
}

/** A node as a parent/child entry. */
export function nodeRef(view: QueryView, node: ViewNode): NodeRef {
	switch (node.kind) {
		case "session": {
			const archive = view.state.sessions[node.sessionId] as SessionArchive;
			const info = sessionInfo(archive);
			return { id: node.id, kind: "session", level: null, startedAt: info.firstAt, endedAt: info.lastAt, preview: info.title };
		}
		case "summary": {
			const s = node.summary;
			return { id: node.id, kind: "summary", level: s.level, startedAt: s.startedAt, endedAt: s.endedAt, preview: summaryPreview(view, s) };
		}
		case "qa": {
			const q = node.qa;
			return { id: node.id, kind: "qa", level: 0, startedAt: q.startedAt, endedAt: q.endedAt, preview: oneLine(questionText(q)) };
		}
	}
}
