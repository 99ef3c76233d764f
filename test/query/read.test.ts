import { beforeAll, describe, expect, it } from "vitest";
import type { QueryView } from "../../src/services/history/projections/queryView.ts";
import { childrenOf } from "../../src/services/history/projections/queryView.ts";
import { readNode } from "../../src/services/history/query/read.ts";
import type { ReadParams, ReadResult } from "../../src/services/history/query/types.ts";
import type { QaNode } from "../../src/services/history/model/types.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";
import {
	NATIVE_KEYS,
	bytesView,
	errorOf,
	fixtureSessionId,
	fixtureView,
	isWellFormed,
	qaByQuestion,
	summariesAt,
	summaryReady,
	withEvents,
} from "./helpers.ts";

/** The whole body, read slice by slice through `nextOffset`. */
function readWhole(view: QueryView, params: ReadParams): { body: string; slices: ReadResult[] } {
	const slices: ReadResult[] = [];
	let offset: number | null = 0;
	while (offset !== null) {
		const r = readNode(view, { ...params, offset });
		slices.push(r);
		offset = r.nextOffset;
		if (slices.length > 10_000) throw new Error("paging does not end");
	}
	return { body: slices.map((s) => s.body).join(""), slices };
}

describe("read", () => {
	let view: QueryView;
	beforeAll(async () => {
		view = await fixtureView(NATIVE_KEYS);
	});

	describe("Q&A bodies", () => {
		it("shows inputs and replies in order with labels, an aborted reply as such", () => {
			const qa = qaByQuestion(view, fixtureSessionId("steer-followup-abort"), "Explain the build pipeline");
			const r = readNode(view, { id: qa.id });
			const [q, aborted, retry, _answer] = qa.parts;
			expect(r.body).toBe(
				[
					`## Question (2026-03-02 09:01)\n${q?.text}`,
					`## Reply (aborted: Request was aborted) (2026-03-02 09:01)\n${aborted?.text}`,
					`## Steering/follow-up input (2026-03-02 09:01)\n${retry?.text}`,
					`## Answer (2026-03-02 09:01)\nShort version: build, test, package, publish.`,
				].join("\n\n"),
			);
			expect(r).toMatchObject({
				kind: "qa",
				level: 0,
				ready: true,
				completed: true,
				totalLength: r.body.length,
				nextOffset: null,
				children: [],
				totalChildren: 0,
			});
			expect(r.source).toEqual({ sessionId: qa.sessionId, entryIds: qa.entryIds });
		});

		it("labels a steering message, an error reply, an image and an unanswered question", () => {
			const steer = readNode(view, { id: qaByQuestion(view, fixtureSessionId("steer-followup-abort"), "Build the project").id }).body;
			expect(steer).toMatch(
				/^## Question \(.*\)\nBuild the project and tell me if it passes\.\n\n## Steering\/follow-up input \(.*\)\nAlso tell me the version/,
			);
			const errorSession = fixtureSessionId("error-reply");
			const errored = Object.values(view.state.sessions[errorSession]?.nodes ?? {}).find((q) => !q.completed) as QaNode;
			expect(readNode(view, { id: errored.id })).toMatchObject({ completed: false });
			expect(readNode(view, { id: errored.id }).body).toMatch(/## Reply \(error: .+\)/);
			const image = readNode(view, { id: qaByQuestion(view, fixtureSessionId("unicode-image"), "What color is this image?").id }).body;
			expect(image).toContain("[1 image, not archived]");
			const open = qaByQuestion(view, fixtureSessionId("clone-at-user"), "And the changelog entry?");
			const body = readNode(view, { id: open.id }).body;
			expect(body).toMatch(/^## Question \(2026-03-11 09:01\)\nAnd the changelog entry\?\n\n## No answer\n/);
		});
	});

	describe("slicing", () => {
		it("never splits a surrogate pair: an emoji across the slice end moves to the next slice", () => {
			const qa = qaByQuestion(view, fixtureSessionId("unicode-image"), "Repeat this exactly");
			const whole = readNode(view, { id: qa.id }).body;
			const at = whole.indexOf("😀");
			expect(at).toBeGreaterThan(0);
			// The slice would end between the halves of 😀: it ends before it instead.
			const first = readNode(view, { id: qa.id, offset: 0, limit: at + 1 });
			expect(first.body).toBe(whole.slice(0, at));
			expect(first.nextOffset).toBe(at);
			const second = readNode(view, { id: qa.id, offset: first.nextOffset as number, limit: 2 });
			expect(second.body).toBe("😀");
			// An offset on the low half starts at the high half.
			const inside = readNode(view, { id: qa.id, offset: at + 1, limit: 2 });
			expect(inside).toMatchObject({ offset: at, body: "😀" });
			// Limit 1 on a pair still moves forward, by the whole pair.
			expect(readNode(view, { id: qa.id, offset: at, limit: 1 })).toMatchObject({ body: "😀", nextOffset: at + 2 });
			for (const limit of [1, 3, 7, 10]) {
				const { body, slices } = readWhole(view, { id: qa.id, limit });
				expect(body).toBe(whole);
				expect(slices.every((s) => isWellFormed(s.body))).toBe(true);
			}
		});

		it("reads 12000 units by default, at most 24000 (clamped, and said), and pages to the end", () => {
			const long = Object.values(view.state.sessions[fixtureSessionId("long-answer")]?.nodes ?? {}).find((q) =>
				q.parts.some((p) => p.text.length > 60_000),
			) as QaNode;
			const first = readNode(view, { id: long.id });
			expect(first.body).toHaveLength(12_000);
			expect(first).toMatchObject({ offset: 0, limit: 12_000, clamped: false, nextOffset: 12_000 });
			expect(first.totalLength).toBeGreaterThan(61_000);
			expect(readNode(view, { id: long.id, limit: 24_000 })).toMatchObject({ limit: 24_000, clamped: false, nextOffset: 24_000 });
			const clamped = readNode(view, { id: long.id, limit: 24_001 });
			expect(clamped).toMatchObject({ limit: 24_000, clamped: true, nextOffset: 24_000 });
			expect(clamped.body).toHaveLength(24_000);
			const { body, slices } = readWhole(view, { id: long.id, limit: 24_000 });
			expect(slices).toHaveLength(Math.ceil(first.totalLength / 24_000));
			expect(body).toHaveLength(first.totalLength);
			expect(body.startsWith(first.body)).toBe(true);
		});

		it("answers an offset at or past the end with an empty body, and rejects bad offsets and limits", () => {
			const qa = qaByQuestion(view, fixtureSessionId("steer-followup-abort"), "Which files");
			const total = readNode(view, { id: qa.id }).totalLength;
			for (const offset of [total, total + 5]) expect(readNode(view, { id: qa.id, offset })).toMatchObject({ body: "", nextOffset: null, totalLength: total });
			expect(readNode(view, { id: qa.id, limit: 0 })).toMatchObject({ body: "", nextOffset: null });
			expect(errorOf(() => readNode(view, { id: qa.id, offset: -1 })).parameter).toBe("offset");
			expect(errorOf(() => readNode(view, { id: qa.id, limit: -1 })).parameter).toBe("limit");
			expect(errorOf(() => readNode(view, { id: qa.id, limit: Number.NaN })).parameter).toBe("limit");
			expect(errorOf(() => readNode(view, { id: qa.id, childrenOffset: -1 })).parameter).toBe("childrenOffset");
		});
	});

	describe("ids", () => {
		it("rejects an unknown id, a malformed one and a missing one, naming the parameter", () => {
			expect(errorOf(() => readNode(view, { id: "qa_AAAAAAAAAAAAAAAAAAAA" }))).toMatchObject({
				code: "UNKNOWN_ID",
				message: 'id: unknown node "qa_AAAAAAAAAAAAAAAAAAAA"',
			});
			expect(errorOf(() => readNode(view, { id: "../../etc/passwd" }))).toMatchObject({ code: "BAD_PARAMETER", parameter: "id" });
			expect(errorOf(() => readNode(view, { id: "" }))).toMatchObject({ code: "BAD_PARAMETER", parameter: "id" });
			expect(errorOf(() => readNode(view, {} as ReadParams))).toMatchObject({ code: "BAD_PARAMETER", parameter: "id" });
		});
	});

	describe("summaries", () => {
		const many = fixtureSessionId("many-qa-72");

		it("answers ready: false with an empty body for a planned summary, its children still listed", () => {
			const s = summariesAt(view, many, 1)[0];
			const r = readNode(view, { id: s?.id as string });
			expect(r).toMatchObject({ kind: "summary", level: 1, ready: false, body: "", totalLength: 0, nextOffset: null, totalChildren: 4 });
			expect(r.children.map((c) => c.id)).toEqual(s?.childIds);
			expect(r.children.every((c) => c.kind === "qa" && c.level === 0 && c.preview.length > 0)).toBe(true);
			expect(readNode(view, { id: r.children[0]?.id as string }).kind).toBe("qa");
		});

		it("answers the text with ready: true once generated", () => {
			const s = summariesAt(view, many, 1)[0] as NonNullable<ReturnType<typeof summariesAt>[number]>;
			const v = withEvents(view, [summaryReady(s, "Modules one to four were reviewed.")]);
			expect(readNode(v, { id: s.id })).toMatchObject({ ready: true, body: "Modules one to four were reviewed.", totalLength: 34 });
			// The parent of a covered Q&A shows the text as its preview.
			expect(readNode(v, { id: s.childIds[0] as string }).parents.find((p) => p.id === s.id)?.preview).toBe("Modules one to four were reviewed.");
		});

		it("gives as source the first and last native entry ids of the covered range, at every level", () => {
			for (const level of [1, 2, 3]) {
				const s = summariesAt(view, many, level)[0];
				if (!s) throw new Error(`no level-${level} summary`);
				const covered = coveredQa(view, s.childIds);
				const first = covered[0] as QaNode;
				const last = covered[covered.length - 1] as QaNode;
				expect(covered).toHaveLength(4 ** level);
				expect(readNode(view, { id: s.id }).source).toEqual({ sessionId: many, entryIds: [first.entryIds[0], last.entryIds[last.entryIds.length - 1]] });
			}
		});
	});

	describe("navigation", () => {
		const shared = fixtureSessionId("shared-prefix-branches");

		it("lists every parent of a node that branches share", () => {
			// The 9th Q&A of the prefix starts the third level-1 chunk of each of the three branches.
			const ninth = qaByQuestion(view, shared, "Prefix question 09");
			const r = readNode(view, { id: ninth.id });
			expect(r.parents).toHaveLength(3);
			for (const p of r.parents) {
				expect(p).toMatchObject({ kind: "summary", level: 1 });
				expect(childrenOf(view, p.id)).toContain(ninth.id);
			}
			// The shared first summary is a top node of every branch: its one parent is the session.
			const firstChunk = readNode(view, { id: r.parents[0]?.id as string });
			expect(readNode(view, { id: qaByQuestion(view, shared, "Prefix question 01").id }).parents).toHaveLength(1);
			expect(firstChunk.parents.map((p) => [p.id, p.kind, p.level])).toEqual([[shared, "session", null]]);
		});

		it("reads a session root as a directory of each branch's top nodes", () => {
			const r = readNode(view, { id: shared });
			expect(r).toMatchObject({ kind: "session", level: null, parents: [], source: { sessionId: shared, entryIds: [] }, ready: true, completed: true });
			expect(r.children.map((c) => c.id)).toEqual(childrenOf(view, shared));
			expect(r.body.match(/^## Branch \d of 3/gm)).toHaveLength(3);
			for (const child of r.children) expect(r.body).toContain(`- ${child.id} · `);
			expect(r.body.split("\n")[0]).toBe(`# ${r.sessionTitle}`);
		});

		it("pages children 20 at a time: all pages together are every child once", async () => {
			const id = "0190eeee-0000-7000-8000-000000000001";
			const lines: unknown[] = [header(id), user("u0", null, "root question"), reply("a0", "u0", "root answer")];
			for (let i = 1; i <= 45; i++) lines.push(user(`u${i}`, "a0", `branch question ${i}`), reply(`a${i}`, `u${i}`, `answer ${i}`));
			const v = await bytesView([jsonl(lines)]);
			const all = childrenOf(v, id);
			expect(all).toHaveLength(46);
			const seen: string[] = [];
			const pages: ReadResult[] = [];
			let childrenOffset: number | null = 0;
			while (childrenOffset !== null) {
				const r = readNode(v, { id, childrenOffset });
				pages.push(r);
				seen.push(...r.children.map((c) => c.id));
				childrenOffset = r.nextChildrenOffset;
			}
			expect(pages.map((p) => [p.childrenOffset, p.children.length, p.nextChildrenOffset])).toEqual([
				[0, 20, 20],
				[20, 20, 40],
				[40, 6, null],
			]);
			expect(seen).toEqual(all);
			expect(pages.every((p) => p.totalChildren === 46)).toBe(true);
			expect(readNode(v, { id, childrenOffset: 46 })).toMatchObject({ children: [], nextChildrenOffset: null });
			expect(readNode(v, { id, childrenOffset: "999" })).toMatchObject({ children: [], nextChildrenOffset: null });
			// The shared first Q&A has one parent, the session, though all 45 branches reach it.
			const rootQa = readNode(v, { id: all[0] as string });
			expect(rootQa.parents.map((p) => p.id)).toEqual([id]);
		});
	});
});

function coveredQa(view: QueryView, ids: readonly string[]): QaNode[] {
	return ids.flatMap((id) => {
		const node = view.nodes.get(id);
		if (node?.kind === "qa") return [node.qa];
		if (node?.kind === "summary") return coveredQa(view, node.summary.childIds);
		return [];
	});
}
