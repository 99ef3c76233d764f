import { map, type OperatorFunction } from "rxjs";
import { branchLevels, CHUNK_SIZE } from "../model/hierarchy.ts";
import type { GroupedSession } from "./groupBranches.ts";
import { summaryId } from "../model/ids.ts";
import type { Branch, QaNode, SummaryPlan } from "../model/types.ts";

/** A session with every summary planned, level by level, on every branch. */
export interface PlannedSession extends GroupedSession {
	/** Plans in order: level 1 first, then by first appearance along the branches. */
	readonly plans: readonly SummaryPlan[];
}

/**
 * Plans summaries: every four consecutive Q&A of a branch form a level-1 summary, every four
 * consecutive level-1 summaries a level-2 summary, and so on (the rule of four is
 * `model/hierarchy.ts`'s, which the query side uses too). A plan's id comes from its session,
 * level and children, so a chunk that branches share is one plan, and plans never merge across
 * branches (their children differ).
 */
export function reduceLevels(): OperatorFunction<GroupedSession, PlannedSession> {
	return map((grouped) => ({ ...grouped, plans: planSummaries(grouped.sessionId, grouped.branches, grouped.nodes) }));
}

export function planSummaries(sessionId: string, branches: readonly Branch[], nodes: ReadonlyMap<string, QaNode>): SummaryPlan[] {
	const plans = new Map<string, SummaryPlan>();
	const byLevel: SummaryPlan[][] = [];
	for (const branch of branches) {
		const levels = branchLevels(branch.nodeIds, (children, level) => summaryId(sessionId, level, children));
		for (let level = 1; level < levels.length; level++) {
			const below = levels[level - 1] as string[];
			(levels[level] as string[]).forEach((id, position) => {
				if (plans.has(id)) return;
				const childIds = below.slice(position * CHUNK_SIZE, (position + 1) * CHUNK_SIZE);
				const plan = makePlan(sessionId, level, id, childIds, nodes, plans);
				plans.set(id, plan);
				(byLevel[level] ??= []).push(plan);
			});
		}
	}
	return byLevel.flatMap((list) => list ?? []);
}

function makePlan(
	sessionId: string,
	level: number,
	id: string,
	childIds: string[],
	nodes: ReadonlyMap<string, QaNode>,
	plans: ReadonlyMap<string, SummaryPlan>,
): SummaryPlan {
	const first = childIds[0] as string;
	const last = childIds[childIds.length - 1] as string;
	if (level === 1) {
		const a = nodes.get(first) as QaNode;
		const b = nodes.get(last) as QaNode;
		const covered = childIds.map((c) => nodes.get(c) as QaNode);
		return {
			id,
			sessionId,
			level,
			childIds,
			range: { firstEntryId: a.entryIds[0] as string, lastEntryId: b.entryIds[b.entryIds.length - 1] as string },
			startedAt: a.startedAt,
			endedAt: covered.reduce((t, n) => (n.endedAt > t ? n.endedAt : t), a.endedAt),
		};
	}
	const covered = childIds.map((c) => plans.get(c) as SummaryPlan);
	const a = covered[0] as SummaryPlan;
	const b = covered[covered.length - 1] as SummaryPlan;
	return {
		id,
		sessionId,
		level,
		childIds,
		range: { firstEntryId: a.range.firstEntryId, lastEntryId: b.range.lastEntryId },
		startedAt: a.startedAt,
		endedAt: covered.reduce((t, p) => (p.endedAt > t ? p.endedAt : t), a.endedAt),
	};
}
