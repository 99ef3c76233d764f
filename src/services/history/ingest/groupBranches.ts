import { map, type OperatorFunction } from "rxjs";
import type { PairedSession } from "./pairTurns.ts";
import type { Branch } from "../model/types.ts";

/** A session's Q&A grouped into its distinct branches. */
export interface GroupedSession extends PairedSession {
	readonly branches: readonly Branch[];
}

/**
 * Keeps every root→leaf path that adds something: a path with no Q&A, or whose Q&A are a prefix
 * of another path's (a leaf that is a tool result or a custom message after an answer), is not a
 * branch of its own. Nodes on a shared prefix are the same node objects and ids on every branch.
 * Identical paths (two leaves below the same last Q&A) keep the first.
 */
export function groupBranches(): OperatorFunction<PairedSession, GroupedSession> {
	return map((paired) => ({ ...paired, branches: distinctBranches(paired.paths) }));
}

export function distinctBranches(paths: readonly Branch[]): Branch[] {
	// A Q&A node is made at one place in the tree, so its id fixes everything before it on a
	// path: a path is covered exactly when its last node stands before the end of another path.
	const inner = new Set<string>();
	for (const p of paths) for (let i = 0; i < p.nodeIds.length - 1; i++) inner.add(p.nodeIds[i] as string);
	const seenLast = new Set<string>();
	const out: Branch[] = [];
	for (const p of paths) {
		const last = p.nodeIds[p.nodeIds.length - 1];
		if (last === undefined || inner.has(last) || seenLast.has(last)) continue;
		seenLast.add(last);
		out.push({ leafId: p.leafId, nodeIds: p.nodeIds });
	}
	return out;
}
