import { describe, expect, it } from "vitest";
import { planSummaries } from "../../src/services/history/ingest/reduceLevels.ts";
import { branchLevels, topNodes } from "../../src/services/history/model/hierarchy.ts";
import type { QaNode } from "../../src/services/history/model/types.ts";

const qa = (id: string, i: number): QaNode => ({
	kind: "qa",
	id,
	sessionId: "s",
	parts: [],
	entryIds: [`e${i}a`, `e${i}b`],
	startedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
	endedAt: new Date(Date.UTC(2026, 0, 1, 0, i, 30)).toISOString(),
	completed: true,
});
const nodesOf = (ids: string[]) => new Map(ids.map((id, i) => [id, qa(id, i)]));
const ids = (n: number, prefix = "q") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("planSummaries", () => {
	it("plans 17 level-1, 4 level-2 and 1 level-3 summaries for 70 Q&A on one branch", () => {
		const nodeIds = ids(70);
		const plans = planSummaries("s", [{ leafId: "x", nodeIds }], nodesOf(nodeIds));
		const perLevel = [1, 2, 3, 4].map((l) => plans.filter((p) => p.level === l).length);
		expect(perLevel).toEqual([17, 4, 1, 0]);
	});

	it("gives a summary the first and last entry ids and the time range of what it covers", () => {
		const nodeIds = ids(16);
		const plans = planSummaries("s", [{ leafId: "x", nodeIds }], nodesOf(nodeIds));
		const l1 = plans.find((p) => p.level === 1)!;
		expect(l1.childIds).toEqual(["q0", "q1", "q2", "q3"]);
		expect(l1.range).toEqual({ firstEntryId: "e0a", lastEntryId: "e3b" });
		const l2 = plans.find((p) => p.level === 2)!;
		expect(l2.range).toEqual({ firstEntryId: "e0a", lastEntryId: "e15b" });
		expect([l2.startedAt, l2.endedAt]).toEqual(["2026-01-01T00:00:00.000Z", "2026-01-01T00:15:30.000Z"]);
	});

	it("plans a chunk that two branches share once, with one id, and never merges across branches", () => {
		const prefix = ids(6);
		const a = [...prefix, "a6", "a7"];
		const b = [...prefix, "b6", "b7"];
		const plans = planSummaries(
			"s",
			[
				{ leafId: "la", nodeIds: a },
				{ leafId: "lb", nodeIds: b },
			],
			nodesOf([...a, "b6", "b7"]),
		);
		const l1 = plans.filter((p) => p.level === 1);
		expect(l1.map((p) => p.childIds)).toEqual([
			["q0", "q1", "q2", "q3"],
			["q4", "q5", "a6", "a7"],
			["q4", "q5", "b6", "b7"],
		]);
		expect(new Set(l1.map((p) => p.id)).size).toBe(3);
	});

	it("derives ids only from session, level and children: same input, same ids", () => {
		const nodeIds = ids(20);
		const once = planSummaries("s", [{ leafId: "x", nodeIds }], nodesOf(nodeIds)).map((p) => p.id);
		const twice = planSummaries("s", [{ leafId: "y", nodeIds }], nodesOf(nodeIds)).map((p) => p.id);
		expect(once).toEqual(twice);
		expect(once.every((id) => /^s[0-9]+_[A-Za-z0-9_-]+$/.test(id))).toBe(true);
		expect(planSummaries("other", [{ leafId: "x", nodeIds }], nodesOf(nodeIds)).map((p) => p.id)).not.toEqual(once);
	});

	it("keeps existing plan ids when the branch grows", () => {
		const before = planSummaries("s", [{ leafId: "x", nodeIds: ids(9) }], nodesOf(ids(9))).map((p) => p.id);
		const after = planSummaries("s", [{ leafId: "y", nodeIds: ids(40) }], nodesOf(ids(40))).map((p) => p.id);
		expect(after).toEqual(expect.arrayContaining(before));
	});
});

describe("topNodes", () => {
	it("covers a branch with the top level and each level's uncovered tail, in order", () => {
		const levels = branchLevels(ids(70), (children, level) => `L${level}(${children[0]})`);
		expect(topNodes(levels)).toEqual(["L3(L2(L1(q0)))", "L1(q64)", "q68", "q69"]);
	});
});
