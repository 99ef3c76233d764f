import { fauxAssistantMessage, registerFauxProvider, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { applyArchiveEvents, initialArchiveState, type ArchiveState } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { PROMPT_VERSION } from "../../src/services/history/summaries/prompts.ts";
import { GIVE_UP_AFTER, runSummaryPass, type SummaryTarget } from "../../src/services/history/summaries/summaryWorker.ts";
import type { SummaryModel } from "../../src/services/history/summaries/summaryModel.ts";
import { piSummaryModel } from "../../src/integrations/pi/history/piSummaryModel.ts";
import { header, jsonl, linearSession, replayEvents, reply, user } from "../helpers/entries.ts";

let faux: FauxProviderRegistration | undefined;
afterEach(() => {
	faux?.unregister();
	faux = undefined;
});

/** An in-memory target: state plus the events the worker applied. */
function target(events: HistoryEvent[]): SummaryTarget & { applied: HistoryEvent[] } {
	let state: ArchiveState = applyArchiveEvents(initialArchiveState(), events);
	const applied: HistoryEvent[] = [];
	return {
		applied,
		state: () => state,
		applyEvents: async (e) => {
			applied.push(...e);
			state = applyArchiveEvents(state, e);
		},
	};
}

/** The faux model, answering each call through `answer`, with calls and overlap counted. */
function fauxModel(answer: (user: string, call: number) => ReturnType<typeof fauxAssistantMessage>, contextWindow = 128_000) {
	faux = registerFauxProvider({ provider: "faux-sum", models: [{ id: "sum-1", contextWindow, maxTokens: 512 }] });
	const prompts: string[] = [];
	faux.setResponses(
		Array.from({ length: 200 }, () => (context: { messages: { content: unknown }[] }) => {
			const last = context.messages[context.messages.length - 1]!;
			const text = Array.isArray(last.content) ? (last.content as { text?: string }[]).map((b) => b.text ?? "").join("") : String(last.content);
			prompts.push(text);
			return answer(text, prompts.length);
		}),
	);
	const inner = piSummaryModel(faux.getModel(), { apiKey: "k" });
	let inFlight = 0;
	let maxInFlight = 0;
	const model: SummaryModel = {
		...inner,
		complete: async (request, signal) => {
			inFlight++;
			maxInFlight = Math.max(maxInFlight, inFlight);
			try {
				return await inner.complete(request, signal);
			} finally {
				inFlight--;
			}
		},
	};
	return { model, prompts, maxInFlight: () => maxInFlight, calls: () => faux!.state.callCount };
}

const SID = "0190bbbb-0000-7000-8000-000000000001";
const linear = (n: number, openLast = false) => linearSession(SID, n, { openTail: openLast, question: (i) => `question ${i} about topic-${i}` });

describe("summary worker with the faux model", () => {
	it("makes every due summary one call at a time, level 1 oldest first, then level 2 from level-1 texts", async () => {
		const t = target(await replayEvents(jsonl(linear(16))));
		const m = fauxModel((_u, n) => fauxAssistantMessage(`summary #${n}`));
		const report = await runSummaryPass(t, m.model, new AbortController().signal);
		expect(report).toMatchObject({ made: 5, failed: 0, aborted: false, remaining: 0 });
		expect(m.calls()).toBe(5);
		expect(m.maxInFlight()).toBe(1);
		// Four level-1 summaries in time order, then the level-2 one reading their texts.
		expect(m.prompts.slice(0, 4).map((p) => /question (\d+)/.exec(p)?.[1])).toEqual(["0", "4", "8", "12"]);
		expect(m.prompts[4]).toContain("summary #1");
		expect(m.prompts[4]).toContain("summary #4");
		const summaries = Object.values(t.state().sessions[SID]!.summaries);
		expect(summaries.every((s) => s.status === "ready")).toBe(true);
	});

	it("stores provenance: model, prompt version, input hash, time and usage", async () => {
		const t = target(await replayEvents(jsonl(linear(4))));
		const m = fauxModel(() => fauxAssistantMessage("We chose SQLite."));
		await runSummaryPass(t, m.model, new AbortController().signal, { now: () => new Date("2026-05-01T12:00:00Z") });
		const s = Object.values(t.state().sessions[SID]!.summaries)[0]!;
		expect(s).toMatchObject({
			status: "ready",
			text: "We chose SQLite.",
			model: "faux-sum/sum-1",
			madeAt: "2026-05-01T12:00:00.000Z",
			promptVersion: PROMPT_VERSION,
		});
		expect(s.inputHash).toMatch(/^[A-Za-z0-9_-]{24}$/);
		expect(s.usage?.totalTokens).toBeGreaterThan(0);
	});

	it("records a failure, leaves the summary pending, and succeeds on the next pass", async () => {
		const t = target(await replayEvents(jsonl(linear(4))));
		const m = fauxModel((_u, n) => (n <= 2 ? fauxAssistantMessage([], { stopReason: "error", errorMessage: "overloaded" }) : fauxAssistantMessage("ok now")));
		const first = await runSummaryPass(t, m.model, new AbortController().signal, { maxAttemptsPerSummary: 2 });
		expect(first).toMatchObject({ made: 0, failed: 2, remaining: 1 });
		const pending = Object.values(t.state().sessions[SID]!.summaries)[0]!;
		expect(pending).toMatchObject({ status: "pending", failure: { error: "overloaded", attempts: 2 } });
		const second = await runSummaryPass(t, m.model, new AbortController().signal);
		expect(second).toMatchObject({ made: 1, failed: 0 });
		const ready = Object.values(t.state().sessions[SID]!.summaries)[0]!;
		expect(ready.text).toBe("ok now");
		expect(ready.failure).toBeUndefined();
	});

	it("reports the failures: attempts, the summaries left failing, and each error with its count in the order they came", async () => {
		const t = target(await replayEvents(jsonl(linear(12))));
		// Three level-1 summaries: the first fails twice, with two errors (then left for the next pass), the second fails once then is made, the third is made.
		const errors: Record<number, string> = { 1: "529 overloaded", 2: "401 invalid x-api-key", 3: "529 overloaded" };
		const m = fauxModel((_u, n) => {
			const error = errors[n];
			return error ? fauxAssistantMessage([], { stopReason: "error", errorMessage: error }) : fauxAssistantMessage(`s${n}`);
		});
		const report = await runSummaryPass(t, m.model, new AbortController().signal);
		expect(report).toMatchObject({
			made: 2,
			failed: 3,
			failedSummaries: 1,
			calls: 5,
			errors: [
				{ message: "529 overloaded", count: 2 },
				{ message: "401 invalid x-api-key", count: 1 },
			],
		});
		const clean = await runSummaryPass(t, m.model, new AbortController().signal);
		expect(clean).toMatchObject({ made: 1, failed: 0, failedSummaries: 0, errors: [] });
	});

	it("gives up a pass that has made nothing once its first attempts all failed alike, and not otherwise", async () => {
		// Five level-1 summaries due, and one of level 2 above them.
		const alike = target(await replayEvents(jsonl(linear(20))));
		const wrongKey = fauxModel(() => fauxAssistantMessage([], { stopReason: "error", errorMessage: "401 invalid x-api-key" }));
		const seen: string[] = [];
		const stopped = await runSummaryPass(alike, wrongKey.model, new AbortController().signal, { onFailure: (e) => void seen.push(e) });
		expect(stopped).toMatchObject({ made: 0, failed: GIVE_UP_AFTER, calls: GIVE_UP_AFTER, gaveUp: true, failedSummaries: 2, remaining: 6 });
		expect(seen).toEqual(Array(GIVE_UP_AFTER).fill("401 invalid x-api-key"));

		// Errors that differ (a flaky provider) go on, and so does a pass that has made one.
		const mixed = target(await replayEvents(jsonl(linear(20))));
		const flaky = fauxModel((_u, n) => fauxAssistantMessage([], { stopReason: "error", errorMessage: n % 2 === 0 ? "529 overloaded" : "500 internal" }));
		const tried = await runSummaryPass(mixed, flaky.model, new AbortController().signal);
		expect(tried).toMatchObject({ made: 0, failed: 10, calls: 10, failedSummaries: 5 });
		expect(tried.gaveUp).toBeUndefined();
		const madeOne = target(await replayEvents(jsonl(linear(20))));
		const afterOne = fauxModel((_u, n) =>
			n === 1 ? fauxAssistantMessage("s1") : fauxAssistantMessage([], { stopReason: "error", errorMessage: "429 rate limited" }),
		);
		const went = await runSummaryPass(madeOne, afterOne.model, new AbortController().signal);
		expect(went).toMatchObject({ made: 1, failed: 8, failedSummaries: 4 });
		expect(went.gaveUp).toBeUndefined();
	});

	it("stores nothing for a summary whose call is aborted", async () => {
		const t = target(await replayEvents(jsonl(linear(8))));
		const controller = new AbortController();
		const m = fauxModel((_u, n) => {
			if (n === 2) controller.abort();
			return fauxAssistantMessage(`s${n}`);
		});
		const report = await runSummaryPass(t, m.model, controller.signal);
		expect(report.aborted).toBe(true);
		const statuses = Object.values(t.state().sessions[SID]!.summaries).map((s) => s.status);
		expect(statuses).toEqual(["ready", "pending"]);
		expect(t.applied.filter((e) => e.type === "SummaryReady")).toHaveLength(1);
	});

	it("summarizes input too long for the model in segments on Q&A boundaries, then merges them", async () => {
		const lines: unknown[] = [header(SID)];
		let parent: string | null = null;
		for (let i = 0; i < 4; i++) {
			lines.push(user(`u${i}`, parent, `question ${i}`));
			lines.push(reply(`a${i}`, `u${i}`, `answer ${i}: ${"lorem ipsum dolor sit amet ".repeat(40)}`));
			parent = `a${i}`;
		}
		const t = target(await replayEvents(jsonl(lines)));
		// 1700 tokens − 512 for the answer − the prompt margin leaves ~1,700 characters: one Q&A each.
		const m = fauxModel((u) => fauxAssistantMessage(u.startsWith("Segment") ? "part" : "merged"), 1700);
		const report = await runSummaryPass(t, m.model, new AbortController().signal);
		expect(report.made).toBe(1);
		const segments = m.prompts.filter((p) => p.startsWith("Segment "));
		expect(segments.length).toBeGreaterThan(1);
		expect(m.calls()).toBe(segments.length + 1);
		// Cut between Q&A: every question appears whole in exactly one segment, with its answer.
		for (let i = 0; i < 4; i++) {
			const holding = segments.filter((p) => p.includes(`question ${i}`));
			expect(holding).toHaveLength(1);
			expect(holding[0]).toContain(`answer ${i}:`);
		}
		expect(m.prompts.at(-1)).toContain("part");
		expect(Object.values(t.state().sessions[SID]!.summaries)[0]?.text).toBe("merged");
		// The original is untouched: the answers are whole in the archive.
		expect(Object.values(t.state().sessions[SID]!.nodes).every((n) => n.parts[1]!.text.length > 1000)).toBe(true);
	});

	it("adds calls only for new chunks when a session grows (existing summaries are reused)", async () => {
		const all = linear(12);
		const t = target(await replayEvents(jsonl(all.slice(0, 1 + 16)))); // the first 8 Q&A
		const m = fauxModel((_u, n) => fauxAssistantMessage(`s${n}`));
		await runSummaryPass(t, m.model, new AbortController().signal);
		expect(m.calls()).toBe(2);
		const grown = applyArchiveEvents(t.state(), await replayEvents(jsonl(all)));
		let state = grown;
		await runSummaryPass({ state: () => state, applyEvents: async (e) => void (state = applyArchiveEvents(state, e)) }, m.model, new AbortController().signal);
		expect(m.calls()).toBe(3);
		expect(m.prompts[2]).toContain("question 8");
	});

	it("marks a summary stale when an open Q&A it covers gets its answer, keeps its text, and makes it again", async () => {
		const t = target(await replayEvents(jsonl(linear(4, true))));
		const m = fauxModel((_u, n) => fauxAssistantMessage(`version ${n}`));
		await runSummaryPass(t, m.model, new AbortController().signal);
		const id = Object.keys(t.state().sessions[SID]!.summaries)[0]!;
		expect(t.state().sessions[SID]!.summaries[id]).toMatchObject({ text: "version 1" });
		await t.applyEvents(await replayEvents(jsonl([...linear(4, true), reply("a3", "u3", "the late answer")])));
		expect(t.state().sessions[SID]!.summaries[id]).toMatchObject({ status: "ready", stale: true, text: "version 1" });
		await runSummaryPass(t, m.model, new AbortController().signal);
		const again = t.state().sessions[SID]!.summaries[id]!;
		expect(again).toMatchObject({ text: "version 2" });
		expect(again.stale).toBeUndefined();
		expect(m.prompts[1]).toContain("the late answer");
	});
});
