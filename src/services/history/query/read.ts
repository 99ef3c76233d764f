import type { SessionArchive, SummaryRecord } from "../projections/archive.ts";
import { summaryId } from "../model/ids.ts";
import { childrenOf, parentsOf, type QueryView, type ViewNode } from "../projections/queryView.ts";
import { branchLevels, topNodes } from "../model/hierarchy.ts";
import type { QaNode, QaReply } from "../model/types.ts";
import { coveredQa, nodeRef, sessionInfo, staleFlag, summaryCompleted } from "./nodeInfo.ts";
import { CHILDREN_PAGE_SIZE, parseNodeId, parseNonNegativeInteger, parsePage, READ_DEFAULT_LIMIT, READ_MAX_LIMIT } from "./params.ts";
import { formatRange, formatTime, sliceUtf16 } from "./text.ts";
import type { NodeRef, ReadParams, ReadResult } from "./types.ts";

/**
 * The tool's `read`: a node's body, sliced by UTF-16 `offset`/`limit` (never inside a surrogate
 * pair), with every parent, one page of children and the node's native source. Bodies:
 * - a Q&A: its inputs and replies in order under labelled headings (see `qaBody`);
 * - a summary: its text; empty with `ready: false` while it is not generated (its children are
 *   still listed and readable);
 * - a session root: a directory listing of each branch's top nodes (see `sessionBody`).
 * Runs on the in-memory view only.
 */
export function readNode(view: QueryView, params: ReadParams): ReadResult {
	// A model may call without arguments: that is a missing id, not a crash.
	const p: Partial<ReadParams> = params ?? {};
	const id = parseNodeId(view, p.id);
	const page = parsePage(p.offset, p.limit, { defaultLimit: READ_DEFAULT_LIMIT, maxLimit: READ_MAX_LIMIT });
	const childrenOffset = parseNonNegativeInteger("childrenOffset", p.childrenOffset) ?? 0;
	const node = view.nodes.get(id) as ViewNode;
	const archive = view.state.sessions[node.sessionId] as SessionArchive;
	const info = sessionInfo(archive);

	const facts = nodeFacts(view, node, archive);
	const slice = sliceUtf16(facts.body, page.offset, page.limit);
	const parents = refs(view, parentsOf(view, id));
	const allChildren = childrenOf(view, id).filter((c) => view.nodes.has(c));
	const childIds = allChildren.slice(childrenOffset, childrenOffset + CHILDREN_PAGE_SIZE);
	const childrenEnd = childrenOffset + childIds.length;

	return {
		id,
		kind: node.kind,
		level: facts.level,
		sessionId: node.sessionId,
		sessionTitle: info.title,
		startedAt: facts.startedAt,
		endedAt: facts.endedAt,
		ready: facts.ready,
		completed: facts.completed,
		...facts.extra,
		body: slice.text,
		offset: slice.start,
		limit: page.limit,
		clamped: page.clamped,
		totalLength: facts.body.length,
		// Limit 0 reads nothing: no next offset (the same one would be asked for ever).
		nextOffset: page.limit > 0 && slice.end < facts.body.length ? slice.end : null,
		parents,
		children: refs(view, childIds),
		childrenOffset,
		totalChildren: allChildren.length,
		nextChildrenOffset: childrenEnd < allChildren.length ? childrenEnd : null,
		source: { sessionId: node.sessionId, entryIds: facts.entryIds },
	};
}

interface NodeFacts {
	readonly body: string;
	readonly level: number | null;
	readonly startedAt: string;
	readonly endedAt: string;
	readonly ready: boolean;
	readonly completed: boolean;
	readonly entryIds: readonly string[];
	readonly extra: { stale?: true };
}

function nodeFacts(view: QueryView, node: ViewNode, archive: SessionArchive): NodeFacts {
	switch (node.kind) {
		case "qa": {
			const qa = node.qa;
			return {
				body: qaBody(qa),
				level: 0,
				startedAt: qa.startedAt,
				endedAt: qa.endedAt,
				ready: true,
				completed: qa.completed,
				entryIds: [...qa.entryIds],
				extra: {},
			};
		}
		case "summary": {
			const s = node.summary;
			return {
				body: summaryBody(s),
				level: s.level,
				startedAt: s.startedAt,
				endedAt: s.endedAt,
				ready: s.status === "ready",
				completed: summaryCompleted(view, s),
				entryIds: [s.range.firstEntryId, s.range.lastEntryId],
				extra: staleFlag(s),
			};
		}
		case "session": {
			const info = sessionInfo(archive);
			return {
				body: sessionBody(view, archive),
				level: null,
				startedAt: info.firstAt,
				endedAt: info.lastAt,
				ready: true,
				completed: info.incomplete === 0,
				entryIds: [],
				extra: {},
			};
		}
	}
}

function refs(view: QueryView, ids: readonly string[]): NodeRef[] {
	const out: NodeRef[] = [];
	for (const id of ids) {
		const node = view.nodes.get(id);
		if (node) out.push(nodeRef(view, node));
	}
	return out;
}

/**
 * A Q&A as a person reads it: each part under a `## ` heading with its time (UTC):
 * `Question` (the first input), `Steering/follow-up input` (any later input), `Answer` (the final
 * reply), `Reply` (an earlier reply), with the reason when a reply was cut short —
 * `Reply (aborted: Request was aborted)`, `Reply (error: …)`, `Answer (cut off at the output
 * length limit)`. Images are noted, never included. An unanswered Q&A ends with `## No answer`.
 */
export function qaBody(qa: QaNode): string {
	const sections: string[] = [];
	if (qa.labels && qa.labels.length > 0) sections.push(`Labels: ${qa.labels.join(", ")}`);
	const lastReply = qa.parts.reduce((at, p, i) => (p.kind === "reply" ? i : at), -1);
	let inputs = 0;
	qa.parts.forEach((part, i) => {
		if (part.kind === "input") {
			const heading = inputs++ === 0 ? "Question" : "Steering/follow-up input";
			const images = part.images ? `\n[${part.images} image${part.images === 1 ? "" : "s"}, not archived]` : "";
			sections.push(`## ${heading} (${formatTime(part.at)})\n${part.text}${images}`);
		} else {
			sections.push(`## ${replyHeading(part, i === lastReply && i === qa.parts.length - 1)} (${formatTime(part.at)})\n${part.text || "(no text)"}`);
		}
	});
	const last = qa.parts[qa.parts.length - 1];
	if (!qa.completed && last?.kind === "input") sections.push("## No answer\n(the question was not answered)");
	return sections.join("\n\n");
}

function replyHeading(reply: QaReply, final: boolean): string {
	switch (reply.stopReason) {
		case "stop":
			return final ? "Answer" : "Reply";
		case "length":
			return `${final ? "Answer" : "Reply"} (cut off at the output length limit)`;
		case "aborted":
			return `Reply (aborted: ${reply.error ?? "no reason given"})`;
		case "error":
			return `Reply (error: ${reply.error ?? "no message"})`;
		default:
			return `Reply (${reply.stopReason})`;
	}
}

/** A summary's text; empty until it is generated. */
export function summaryBody(summary: SummaryRecord): string {
	return summary.status === "ready" ? (summary.text ?? "") : "";
}

/**
 * The session root as a directory: the title and facts of the session, then per branch (a
 * root→leaf path) the nodes that together cover it with as few items as possible — the highest
 * summaries, then the uncovered tail — one line each: id, kind and level, time range, preview.
 */
export function sessionBody(view: QueryView, archive: SessionArchive): string {
	const sessionId = archive.session.sessionId;
	const info = sessionInfo(archive);
	const branches = `${info.branches} ${info.branches === 1 ? "branch" : "branches"}`;
	const lines = [
		`# ${info.title}`,
		`Session ${sessionId} · ${formatRange(info.firstAt, info.lastAt)} (UTC) · ${info.qa} Q&A · ${branches}` +
			` · ${info.incomplete} incomplete · summaries: ${info.summariesReady} ready, ${info.summariesPending} pending`,
	];
	if (archive.session.parentSessionId) lines.push(`Forked or cloned from session ${archive.session.parentSessionId}`);
	if (archive.branches.length === 0) lines.push("", "(no Q&A yet)");
	archive.branches.forEach((branch, i) => {
		lines.push("", `## Branch ${i + 1} of ${archive.branches.length} · ${branch.nodeIds.length} Q&A · ends at entry ${branch.leafId}`);
		const levels = branchLevels(branch.nodeIds, (children, level) => summaryId(sessionId, level, children));
		for (const id of topNodes(levels)) {
			const node = view.nodes.get(id);
			if (!node) {
				lines.push(`- ${id} · (missing)`);
				continue;
			}
			const ref = nodeRef(view, node);
			const kind = ref.kind === "summary" ? `summary L${ref.level}` : "Q&A";
			const open = node.kind === "qa" ? !node.qa.completed : node.kind === "summary" && coveredQa(view, node.summary).some((q) => !q.completed);
			lines.push(`- ${id} · ${kind}${open ? " · incomplete" : ""} · ${formatRange(ref.startedAt, ref.endedAt)} · ${ref.preview}`);
		}
	});
	return lines.join("\n");
}
