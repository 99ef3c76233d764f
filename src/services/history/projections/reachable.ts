import type { Branch } from "../model/types.ts";

/**
 * Drops open Q&A and pending summaries that no branch reaches: they were superseded (an open Q&A
 * that absorbed a retry has a new id; a plan over it went with it), and keeping them would bring
 * stale leaves back on every write. Closed Q&A and ready summaries are never dropped. The one rule
 * the archive reducer and the two-writer merge share; it deletes from the records it is given (an
 * immer draft, or a merge's fresh records).
 */
export function pruneUnreachable(
	nodes: Record<string, { readonly completed: boolean }>,
	summaries: Record<string, { readonly id: string; readonly level: number; readonly status: string; readonly childIds: readonly string[] }>,
	branches: readonly Branch[],
): void {
	const reachable = new Set<string>();
	for (const branch of branches) for (const id of branch.nodeIds) reachable.add(id);
	// Plans come level by level; a plan is reachable when its children are.
	const byLevel = Object.values(summaries).sort((a, b) => a.level - b.level);
	for (const s of byLevel) if (s.childIds.every((c) => reachable.has(c))) reachable.add(s.id);
	for (const [id, node] of Object.entries(nodes)) if (!node.completed && !reachable.has(id)) delete nodes[id];
	for (const s of byLevel) if (s.status !== "ready" && !reachable.has(s.id)) delete summaries[s.id];
}
