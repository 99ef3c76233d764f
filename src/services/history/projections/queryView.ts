import { summaryId } from "../model/ids.ts";
import { branchLevels, topNodes } from "../model/hierarchy.ts";
import type { ArchiveState, SessionArchive, SummaryRecord } from "./archive.ts";
import type { QaNode } from "../model/types.ts";

/** A node of the browsing hierarchy: the session root (a directory), a summary or a Q&A. */
export type ViewNode =
	| { readonly kind: "session"; readonly id: string; readonly sessionId: string }
	| { readonly kind: "summary"; readonly id: string; readonly sessionId: string; readonly summary: SummaryRecord }
	| { readonly kind: "qa"; readonly id: string; readonly sessionId: string; readonly qa: QaNode };

/** Parent/child relations of one session's nodes. */
export interface SessionRelations {
	/** The root's children: the top nodes of every branch, in branch order, each once. */
	readonly rootChildren: readonly string[];
	readonly parents: ReadonlyMap<string, readonly string[]>;
}

/**
 * The in-memory view queries run on: every node by id, with parents and children.
 * Built from the archive state (itself a projection of the events), never from JSON text.
 */
export interface QueryView {
	readonly state: ArchiveState;
	readonly nodes: ReadonlyMap<string, ViewNode>;
	readonly relations: ReadonlyMap<string, SessionRelations>;
}

/** Builds the view; sessions whose archive object is unchanged since `previous` reuse its work. */
export function buildQueryView(state: ArchiveState, previous?: QueryView): QueryView {
	const nodes = new Map<string, ViewNode>();
	const relations = new Map<string, SessionRelations>();
	for (const [sessionId, archive] of Object.entries(state.sessions)) {
		const reuse = previous && previous.state.sessions[sessionId] === archive ? previous : undefined;
		nodes.set(sessionId, { kind: "session", id: sessionId, sessionId });
		for (const qa of Object.values(archive.nodes)) nodes.set(qa.id, { kind: "qa", id: qa.id, sessionId, qa });
		for (const summary of Object.values(archive.summaries)) nodes.set(summary.id, { kind: "summary", id: summary.id, sessionId, summary });
		relations.set(sessionId, reuse?.relations.get(sessionId) ?? sessionRelations(archive));
	}
	return { state, nodes, relations };
}

/** Children of any node: the root's top nodes, a summary's covered nodes, none for a Q&A. */
export function childrenOf(view: QueryView, id: string): readonly string[] {
	const node = view.nodes.get(id);
	if (!node) return [];
	if (node.kind === "session") return view.relations.get(node.sessionId)?.rootChildren ?? [];
	if (node.kind === "summary") return node.summary.childIds;
	return [];
}

/** Parents of any node: the summaries that cover it and, for a branch's top node, the root. */
export function parentsOf(view: QueryView, id: string): readonly string[] {
	const node = view.nodes.get(id);
	if (!node || node.kind === "session") return [];
	return view.relations.get(node.sessionId)?.parents.get(id) ?? [];
}

export function sessionRelations(archive: SessionArchive): SessionRelations {
	const sessionId = archive.session.sessionId;
	const parents = new Map<string, string[]>();
	const addParent = (child: string, parent: string) => {
		const list = parents.get(child);
		if (!list) parents.set(child, [parent]);
		else if (!list.includes(parent)) list.push(parent);
	};
	const rootChildren: string[] = [];
	const seenTop = new Set<string>();
	for (const branch of archive.branches) {
		// Summary ids are derived from their children, so the levels of a branch can be recomputed.
		const levels = branchLevels(branch.nodeIds, (children, level) => summaryId(sessionId, level, children));
		for (const id of topNodes(levels)) {
			if (!seenTop.has(id)) {
				seenTop.add(id);
				rootChildren.push(id);
			}
			addParent(id, sessionId);
		}
	}
	for (const summary of Object.values(archive.summaries)) for (const child of summary.childIds) addParent(child, summary.id);
	return { rootChildren, parents };
}
