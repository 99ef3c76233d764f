import { describe, expect, it } from "vitest";
import { fixtureArchive, fixtureBytes, fixtureFacts, qaInOrder, qaWithEntry, texts } from "../helpers/fixtures.ts";

describe("Q&A extraction on real Pi sessions", () => {
	it("keeps only inputs and final replies: no thinking, no text beside tool calls, no tool output", async () => {
		const archive = await fixtureArchive("tools-thinking");
		const raw = new TextDecoder().decode(await fixtureBytes("tools-thinking"));
		const json = JSON.stringify(archive);
		const thinking = [...raw.matchAll(/"thinking":"([^"]{12,})"/g)].map((m) => m[1]!);
		expect(thinking.length).toBeGreaterThan(0);
		for (const t of thinking) expect(json).not.toContain(t);
		const toolOutputs = [...raw.matchAll(/"role":"toolResult".*?"text":"([^"]{8,})"/g)].map((m) => m[1]!);
		expect(toolOutputs.length).toBeGreaterThan(0);
		for (const t of toolOutputs) expect(json).not.toContain(t);
		for (const node of Object.values(archive.nodes)) {
			const replies = node.parts.filter((p) => p.kind === "reply");
			expect(replies.length).toBeGreaterThan(0);
			expect(node.parts[0]?.kind).toBe("input");
		}
	});

	it("spans tool calls and results in a Q&A's entry ids and ends it at the final answer", async () => {
		const archive = await fixtureArchive("tools-thinking");
		const { firstAnswerId } = fixtureFacts<{ firstAnswerId: string }>("tools-thinking");
		const [first] = qaWithEntry(archive, firstAnswerId);
		expect(first).toBeDefined();
		expect(first!.entryIds.at(-1)).toBe(firstAnswerId);
		expect(first!.entryIds.length).toBeGreaterThan(4);
		expect(first!.parts.map((p) => p.kind)).toEqual(["input", "reply"]);
		expect(first!.completed).toBe(true);
	});

	it("puts labels on their Q&A (a cleared label is gone) and reads the session name", async () => {
		const archive = await fixtureArchive("tools-thinking");
		const { firstAnswerId, labelledSecondAnswerId, sessionName } = fixtureFacts<{ firstAnswerId: string; labelledSecondAnswerId: string; sessionName: string }>(
			"tools-thinking",
		);
		expect(qaWithEntry(archive, firstAnswerId)[0]?.labels).toEqual(["owner-found"]);
		expect(qaWithEntry(archive, labelledSecondAnswerId)[0]?.labels).toBeUndefined();
		expect(archive.session.name).toBe(sessionName);
	});

	it("joins steering to the open Q&A and starts a new Q&A at a follow-up", async () => {
		const archive = await fixtureArchive("steer-followup-abort");
		const { steerUserId, followUpUserId } = fixtureFacts<{ steerUserId: string; followUpUserId: string }>("steer-followup-abort");
		const [steered] = qaWithEntry(archive, steerUserId);
		expect(steered!.parts.map((p) => p.kind)).toEqual(["input", "input", "reply"]);
		expect(steered!.parts[1]?.entryId).toBe(steerUserId);
		const [followUp] = qaWithEntry(archive, followUpUserId);
		expect(followUp!.parts[0]?.entryId).toBe(followUpUserId);
		expect(followUp!.parts.filter((p) => p.kind === "input")).toHaveLength(1);
	});

	it("joins a retry after an abort to the aborted Q&A, keeping the partial reply", async () => {
		const archive = await fixtureArchive("steer-followup-abort");
		const { abortedAssistantId } = fixtureFacts<{ abortedAssistantId: string }>("steer-followup-abort");
		const [node] = qaWithEntry(archive, abortedAssistantId);
		expect(node!.parts.map((p) => (p.kind === "reply" ? `reply:${p.stopReason}` : p.kind))).toEqual(["input", "reply:aborted", "input", "reply:stop"]);
		expect(node!.completed).toBe(true);
		expect(Object.values(archive.nodes).filter((n) => n.entryIds.includes(abortedAssistantId))).toHaveLength(1);
	});

	it("keeps a Q&A whose answer was aborted at the leaf as incomplete", async () => {
		const archive = await fixtureArchive("abort-at-leaf");
		const { leafAssistantId } = fixtureFacts<{ leafAssistantId: string }>("abort-at-leaf");
		const [node] = qaWithEntry(archive, leafAssistantId);
		expect(node!.completed).toBe(false);
		expect(qaInOrder(archive).at(-1)?.id).toBe(node!.id);
	});

	it("keeps an error reply with its message; a retry joins; an error at the leaf leaves it incomplete", async () => {
		const archive = await fixtureArchive("error-reply");
		const { emptyQueueErrorId, leafErrorId } = fixtureFacts<{ emptyQueueErrorId: string; leafErrorId: string }>("error-reply");
		const [retried] = qaWithEntry(archive, emptyQueueErrorId);
		const errorPart = retried!.parts.find((p) => p.entryId === emptyQueueErrorId);
		expect(errorPart).toMatchObject({ kind: "reply", stopReason: "error", error: expect.stringContaining("No more faux responses") });
		const [leaf] = qaWithEntry(archive, leafErrorId);
		expect(leaf!.completed).toBe(false);
	});

	it("splits a Q&A that diverges in the middle into two nodes sharing the first input", async () => {
		const archive = await fixtureArchive("tree-branches");
		const { branchPointToolResultId, userUnderToolResultId } = fixtureFacts<{ branchPointToolResultId: string; userUnderToolResultId: string }>(
			"tree-branches",
		);
		const spanning = qaWithEntry(archive, branchPointToolResultId);
		expect(spanning).toHaveLength(2);
		const [a, b] = spanning;
		expect(a!.parts[0]).toEqual(b!.parts[0]);
		expect(a!.id).not.toBe(b!.id);
		const withNewInput = spanning.find((n) => n.parts.some((p) => p.entryId === userUnderToolResultId));
		expect(withNewInput?.parts.filter((p) => p.kind === "input").map((p) => p.entryId)).toEqual([a!.parts[0]!.entryId, userUnderToolResultId]);
		expect(archive.branches.length).toBeGreaterThanOrEqual(2);
	});

	it("reuses the nodes of a shared prefix on every branch", async () => {
		const archive = await fixtureArchive("shared-prefix-branches");
		const { branchFirstUserIds } = fixtureFacts<{ branchFirstUserIds: string[] }>("shared-prefix-branches");
		expect(archive.branches).toHaveLength(3);
		const firsts = archive.branches.map((b) => b.nodeIds[0]);
		expect(new Set(firsts).size).toBe(1);
		for (const userId of branchFirstUserIds) expect(qaWithEntry(archive, userId)).toHaveLength(1);
		const shared = archive.branches[0]!.nodeIds.filter((id) => archive.branches.every((b) => b.nodeIds.includes(id)));
		expect(shared.length).toBeGreaterThanOrEqual(9);
	});

	it("plans exactly 18 level-1, 4 level-2 and 1 level-3 summaries for 72 Q&A on one branch", async () => {
		const archive = await fixtureArchive("many-qa-72");
		expect(Object.keys(archive.nodes)).toHaveLength(72);
		const perLevel = [1, 2, 3, 4].map((l) => Object.values(archive.summaries).filter((s) => s.level === l).length);
		expect(perLevel).toEqual([18, 4, 1, 0]);
	});

	it("keeps CJK, emoji and a very long answer whole", async () => {
		const unicode = await fixtureArchive("unicode-image");
		const { surrogateString } = fixtureFacts<{ surrogateString: string }>("unicode-image");
		expect(Object.values(unicode.nodes).some((n) => texts(n).join("").includes(surrogateString))).toBe(true);
		expect(Object.values(unicode.nodes).some((n) => n.parts.some((p) => p.kind === "input" && (p.images ?? 0) > 0))).toBe(true);
		const long = await fixtureArchive("long-answer");
		const { longAnswerChars } = fixtureFacts<{ longAnswerChars: number }>("long-answer");
		const longest = Math.max(...Object.values(long.nodes).flatMap((n) => n.parts.map((p) => p.text.length)));
		expect(longest).toBe(longAnswerChars);
	});

	it("reads a fork whose entry points at a dropped label: the Q&A stays on the branch", async () => {
		const archive = await fixtureArchive("fork");
		const source = await fixtureArchive("fork-source");
		const { danglingEntryId } = fixtureFacts<{ danglingEntryId: string }>("fork");
		expect(archive.session.parentSessionId).toBe(source.session.sessionId);
		expect(archive.branches).toHaveLength(1);
		const [node] = qaWithEntry(archive, danglingEntryId);
		expect(archive.branches[0]!.nodeIds.indexOf(node!.id)).toBeGreaterThan(0);
	});
});
