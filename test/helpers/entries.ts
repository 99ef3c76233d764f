/**
 * Small builders for session lines in unit tests of single stages. Behaviour on real sessions is
 * tested on the fixtures Pi's own SDK wrote (fixtures/sessions).
 */
import { lastValueFrom, from, toArray, type OperatorFunction } from "rxjs";

let clock = Date.parse("2026-01-01T00:00:00Z");
const nextTime = () => new Date((clock += 1000)).toISOString();

export function header(id = "0190aaaa-0000-7000-8000-000000000001", extra: Record<string, unknown> = {}) {
	return { type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work/ws", ...extra };
}

export function user(id: string, parentId: string | null, text: string) {
	return { type: "message", id, parentId, timestamp: nextTime(), message: { role: "user", content: [{ type: "text", text }], timestamp: clock } };
}

export function reply(id: string, parentId: string | null, text: string, stopReason = "stop") {
	return {
		type: "message",
		id,
		parentId,
		timestamp: nextTime(),
		message: { role: "assistant", content: [{ type: "text", text }], stopReason, timestamp: clock },
	};
}

export function toolUse(id: string, parentId: string | null, sideText = "") {
	return {
		type: "message",
		id,
		parentId,
		timestamp: nextTime(),
		message: {
			role: "assistant",
			content: [...(sideText ? [{ type: "text", text: sideText }] : []), { type: "toolCall", id: `c-${id}`, name: "bash", arguments: { command: "ls" } }],
			stopReason: "toolUse",
		},
	};
}

export function toolResult(id: string, parentId: string | null) {
	return {
		type: "message",
		id,
		parentId,
		timestamp: nextTime(),
		message: { role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "out" }], isError: false },
	};
}

/** JSONL bytes of the given lines. */
export function jsonl(lines: readonly unknown[]): Uint8Array {
	return new TextEncoder().encode(`${lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}\n`);
}

/** Runs an operator over values and collects its output. */
export function run<I, O>(input: readonly I[], op: OperatorFunction<I, O>): Promise<O[]> {
	return lastValueFrom(from(input).pipe(op, toArray()));
}

import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";

/** Replays file bytes through the whole pipeline and returns the events. */
export async function replayEvents(bytes: Uint8Array | readonly Uint8Array[], fallbackSessionId?: string): Promise<HistoryEvent[]> {
	const chunks = bytes instanceof Uint8Array ? [bytes] : bytes;
	const out = await run(chunks, sessionPipeline({ mode: "replay", ...(fallbackSessionId ? { fallbackSessionId } : {}) }));
	return out.flat();
}

/** The events of one type, typed. */
export function ofType<T extends HistoryEvent["type"]>(events: readonly HistoryEvent[], type: T): Extract<HistoryEvent, { type: T }>[] {
	return events.filter((e): e is Extract<HistoryEvent, { type: T }> => e.type === type);
}

/**
 * The lines of a linear session: n questions, each answered (the last one left open with
 * `openTail`). Texts are `question <i>` and `answer <i>` unless `question` says otherwise.
 */
export function linearSession(sessionId: string, n: number, options: { openTail?: boolean; question?: (i: number) => string } = {}): unknown[] {
	const lines: unknown[] = [header(sessionId)];
	let parent: string | null = null;
	for (let i = 0; i < n; i++) {
		lines.push(user(`u${i}`, parent, options.question?.(i) ?? `question ${i}`));
		const last = options.openTail === true && i === n - 1;
		if (!last) lines.push(reply(`a${i}`, `u${i}`, `answer ${i}`));
		parent = last ? `u${i}` : `a${i}`;
	}
	return lines;
}
