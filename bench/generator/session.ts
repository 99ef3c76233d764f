/**
 * One generated Pi session file, line by line, in the shapes Pi 0.73 writes (see the real files
 * in `fixtures/sessions/`): every entry is one `JSON.stringify` of an object whose keys are in
 * Pi's order (`type`, `id`, `parentId`, `timestamp`, `message` …; `custom` entries put
 * `customType` first). What a session holds is drawn from a seeded `Rng`:
 *
 * - `agent` profile (the presets): questions (some long pastes, some CJK, some with images),
 *   tool rounds (assistant thinking + text + tool calls, then one tool result per call: mostly
 *   small, some up to 200 KB), steering while tools run, aborted and errored answers with a
 *   retry, answers cut at `length`, `/tree` branches (some with a `branch_summary`), labels,
 *   `/name`, model and thinking-level changes, `!bash` executions, custom entries, compactions,
 *   and forks (a copy of an earlier session's prefix under a new header with `parentSession`).
 * - `chat` profile (the search corpora): question → answer, no tools, short texts, so a million
 *   Q&A nodes fit in memory with their raw files on disk.
 */
import type { Rng } from "./prng.ts";
import { base64Of, cjkText, codeSlice, filePath, identifier, markdownAnswer, paragraph, sentenceOf } from "./text.ts";

export const BENCH_CWD = "/home/dev/acme-app";
/** Where Pi would keep this workspace's sessions: only used to write `parentSession` of forks. */
export const BENCH_NATIVE_DIR = "/home/dev/.pi/agent/sessions/--home-dev-acme-app--";

export type SessionProfile = "agent" | "chat";

export interface SessionPlan {
	readonly profile: SessionProfile;
	/** Stop adding Q&A once the file holds this many bytes (agent) … */
	readonly targetBytes?: number;
	/** … or this many Q&A (chat). */
	readonly targetQa?: number;
	/** Epoch ms of the header. */
	readonly startMs: number;
	/** Start as a fork of this session (its lines and file name). */
	readonly forkOf?: { readonly fileName: string; readonly lines: readonly string[] };
}

/** Bytes per kind of line (newlines included): where a history's bytes are. */
export interface LineStats {
	toolResult: number;
	assistantToolCalls: number;
	user: number;
	finalAnswer: number;
	other: number;
}

export interface SessionStats {
	readonly bytes: number;
	readonly lines: number;
	readonly questions: number;
	readonly byKind: LineStats;
}

export interface GeneratedSession {
	readonly sessionId: string;
	readonly fileName: string;
	readonly stats: SessionStats;
}

export function emptyLineStats(): LineStats {
	return { toolResult: 0, assistantToolCalls: 0, user: 0, finalAnswer: 0, other: 0 };
}

const MODELS = [
	{ api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" },
	{ api: "openai-responses", provider: "openai", model: "gpt-5" },
	{ api: "google-generative-ai", provider: "google", model: "gemini-2.5-pro" },
];
const TOOL_NAMES = ["bash", "read", "read", "edit", "write", "bash", "read", "grep"];

type Json = Record<string, unknown>;

/**
 * Writes one session through `emit` (one call per line, without the newline) and returns what
 * it wrote. Lines are produced in order; nothing but the fork source is held in memory.
 */
export function generateSession(rng: Rng, plan: SessionPlan, emit: (line: string, kind: keyof LineStats) => void): GeneratedSession {
	const stats = emptyLineStats();
	let bytes = 0;
	let lineCount = 0;
	let questions = 0;
	const put = (line: string, kind: keyof LineStats) => {
		const size = Buffer.byteLength(line) + 1;
		stats[kind] += size;
		bytes += size;
		lineCount++;
		emit(line, kind);
	};

	let clock = plan.startMs;
	const iso = () => new Date(clock).toISOString();
	const tick = (minMs: number, maxMs: number) => {
		clock += rng.range(minMs, maxMs);
	};
	const sessionId = uuidV7(rng, plan.startMs);
	const fileName = `${new Date(plan.startMs).toISOString().replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
	const usedIds = new Set<string>();
	const newId = () => {
		for (;;) {
			const id = (rng.u32() >>> 0).toString(16).padStart(8, "0");
			if (!usedIds.has(id)) {
				usedIds.add(id);
				return id;
			}
		}
	};
	const model = MODELS[rng.skewed(MODELS.length, 2)] as (typeof MODELS)[number];

	const header: Json = { type: "session", version: 3, id: sessionId, timestamp: iso(), cwd: BENCH_CWD };
	if (plan.forkOf) header.parentSession = `${BENCH_NATIVE_DIR}/${plan.forkOf.fileName}`;
	put(JSON.stringify(header), "other");

	/** The entry new entries hang under (Pi's leaf). */
	let leaf: string | null = null;
	/** Entries a `/tree` navigation can go back to: answers and tool results. */
	const branchPoints: string[] = [];
	const entry = (type: string, fields: Json): string => {
		const id = newId();
		const line = JSON.stringify({ type, id, parentId: leaf, timestamp: iso(), ...fields });
		leaf = id;
		return line;
	};

	if (plan.forkOf) {
		// A fork copies the source's entries up to one of its answers (same ids and timestamps).
		const source = plan.forkOf.lines;
		let cut = 1;
		for (let i = 1; i < source.length; i++) if (source[i]?.includes('"stopReason":"stop"') && rng.chance(0.5)) cut = i;
		for (let i = 1; i <= cut && i < source.length; i++) {
			const line = source[i] as string;
			const id = /"id":"([0-9a-f]{8})"/.exec(line)?.[1];
			if (id) {
				usedIds.add(id);
				leaf = id;
			}
			put(line, line.includes('"role":"toolResult"') ? "toolResult" : "other");
		}
	} else {
		tick(1, 3);
		put(entry("model_change", { provider: model.provider, modelId: model.model }), "other");
		tick(1, 2);
		put(entry("thinking_level_change", { thinkingLevel: rng.pick(["off", "low", "medium", "high"]) }), "other");
	}

	const usage = (input: number, output: number): Json => ({
		input,
		output,
		cacheRead: rng.int(input * 4),
		cacheWrite: rng.int(input),
		totalTokens: input + output,
		cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 },
	});
	const assistant = (content: Json[], stopReason: string, errorMessage?: string): string => {
		tick(800, plan.profile === "chat" ? 8_000 : 40_000);
		const message: Json = {
			role: "assistant",
			content,
			api: model.api,
			provider: model.provider,
			model: model.model,
			usage: usage(rng.range(500, 90_000), rng.range(5, 4_000)),
			stopReason,
		};
		if (errorMessage !== undefined) message.errorMessage = errorMessage;
		message.timestamp = clock - rng.int(400);
		return entry("message", { message });
	};
	const thinking = (chars: number): Json => ({ type: "thinking", thinking: prose(rng, chars, false), thinkingSignature: base64Of(rng, rng.range(300, 900)) });
	const user = (text: string, images: number): string => {
		tick(plan.profile === "chat" ? 5_000 : 10_000, 180_000);
		const content: Json[] = [{ type: "text", text }];
		for (let i = 0; i < images; i++) content.push({ type: "image", data: base64Of(rng, rng.logNormal(60_000, 0.8, 4_000, 400_000)), mimeType: "image/png" });
		return entry("message", { message: { role: "user", content, timestamp: clock - rng.int(50) } });
	};

	const toolRound = () => {
		const calls = rng.chance(0.75) ? 1 : rng.range(2, 3);
		const content: Json[] = [];
		if (rng.chance(0.85)) content.push(thinking(rng.logNormal(350, 0.9, 40, 6_000)));
		if (rng.chance(0.7)) content.push({ type: "text", text: sentenceOf(rng, 4, 16) });
		const made: { id: string; name: string; args: Json }[] = [];
		for (let c = 0; c < calls; c++) {
			const name = rng.pick(TOOL_NAMES);
			const id = `toolu_01${base64Of(rng, 22).replace(/[+/=]/g, "x").slice(0, 22)}`;
			const args = toolArguments(rng, name);
			made.push({ id, name, args });
			content.push({ type: "toolCall", id, name, arguments: args });
		}
		put(assistant(content, "toolUse"), "assistantToolCalls");
		branchPoints.push(leaf as string);
		for (const call of made) {
			tick(30, 9_000);
			put(entry("message", { message: toolResult(rng, call.id, call.name, call.args, clock) }), "toolResult");
			if (rng.chance(0.08)) branchPoints.push(leaf as string);
		}
	};
	const finalAnswer = (cjk: boolean, stopReason = "stop") => {
		const content: Json[] = [];
		if (plan.profile === "agent" && rng.chance(0.8)) content.push(thinking(rng.logNormal(plan.profile === "agent" ? 500 : 150, 0.8, 30, 5_000)));
		const chars = plan.profile === "agent" ? rng.logNormal(1_100, 0.85, 40, 30_000) : rng.logNormal(380, 0.7, 20, 4_000);
		content.push({ type: "text", text: markdownAnswer(rng, chars, cjk) });
		put(assistant(content, stopReason), "finalAnswer");
		branchPoints.push(leaf as string);
	};

	const done = () => (plan.targetQa !== undefined ? questions >= plan.targetQa : bytes >= (plan.targetBytes ?? 0));
	let named = false;
	while (!done()) {
		const agent = plan.profile === "agent";
		// Between questions: what a person does in Pi besides asking.
		if (questions > 2 && branchPoints.length > 4 && rng.chance(agent ? 0.05 : 0.01)) {
			leaf = branchPoints[rng.int(branchPoints.length - 1)] as string;
			tick(2_000, 30_000);
			if (rng.chance(0.4)) {
				put(
					entry("branch_summary", {
						fromId: leaf,
						summary: `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n${sentenceOf(rng, 5, 12)}`,
						details: { readFiles: [filePath(rng)], modifiedFiles: [] },
						fromHook: false,
					}),
					"other",
				);
			}
		}
		if (!named && questions >= 1 && rng.chance(0.5)) {
			named = true;
			put(entry("session_info", { name: sentenceOf(rng, 2, 6).slice(0, -1) }), "other");
		}
		if (agent) {
			if (rng.chance(0.03)) put(entry("model_change", { provider: model.provider, modelId: model.model }), "other");
			if (rng.chance(0.03)) put(entry("thinking_level_change", { thinkingLevel: rng.pick(["off", "low", "medium", "high"]) }), "other");
			if (rng.chance(0.02)) {
				tick(2_000, 60_000);
				const command = `${rng.pick(["npm test", "git status", "ls -la", "cat", "rg"])} ${filePath(rng)}`;
				put(
					entry("message", {
						message: {
							role: "bashExecution",
							command,
							output: codeSlice(rng, rng.logNormal(400, 1, 10, 20_000)),
							exitCode: rng.chance(0.8) ? 0 : 1,
							cancelled: false,
							truncated: false,
							timestamp: clock,
						},
					}),
					"other",
				);
			}
			if (rng.chance(0.01)) {
				const id = newId();
				put(
					JSON.stringify({ type: "custom", customType: "bench/bookmark", data: { note: sentenceOf(rng, 2, 6) }, id, parentId: leaf, timestamp: iso() }),
					"other",
				);
				leaf = id;
			}
			if (questions > 20 && rng.chance(0.01)) {
				put(
					entry("compaction", {
						summary: `## Goal\n${paragraph(rng, 3)}\n\n## Progress\n${paragraph(rng, 4)}`,
						firstKeptEntryId: leaf,
						tokensBefore: rng.range(50_000, 180_000),
						details: { readFiles: [filePath(rng)], modifiedFiles: [] },
						fromHook: false,
					}),
					"other",
				);
			}
		}

		// The question.
		questions++;
		const cjk = rng.chance(0.08);
		let text: string;
		if (cjk) text = cjkText(rng, rng.logNormal(agent ? 60 : 50, 0.7, 8, 2_000));
		else if (agent && rng.chance(0.05)) text = `${sentenceOf(rng, 5, 14)}\n\n\`\`\`\n${codeSlice(rng, rng.logNormal(2_500, 0.9, 300, 40_000))}\`\`\``;
		else text = prose(rng, rng.logNormal(agent ? 220 : 140, 0.8, 10, 4_000), false);
		put(user(text, agent && rng.chance(0.01) ? 1 : 0), "user");

		if (!agent) {
			if (rng.chance(0.01)) {
				put(assistant([{ type: "text", text: sentenceOf(rng, 3, 10) }], "aborted", "Request was aborted"), "other");
				put(user("Continue, please.", 0), "user");
			}
			finalAnswer(cjk);
			continue;
		}

		const rounds = rng.chance(0.25) ? 0 : rng.logNormal(2, 0.8, 1, 40);
		for (let r = 0; r < rounds; r++) {
			toolRound();
			if (rng.chance(0.015)) put(user(sentenceOf(rng, 4, 14), 0), "user"); // steering while tools run
		}
		const ending = rng.next();
		if (ending < 0.03) {
			// Aborted mid-answer, then retried.
			put(assistant([{ type: "text", text: prose(rng, rng.range(20, 400), cjk) }], "aborted", "Request was aborted"), "other");
			if (done() || rng.chance(0.15)) continue; // left unanswered at the leaf
			put(user(rng.pick(["Continue.", "Go on, please.", "Try again", "続けてください", "继续"]), 0), "user");
			if (rng.chance(0.5)) toolRound();
			finalAnswer(cjk);
		} else if (ending < 0.04) {
			put(assistant([], "error", rng.pick(["overloaded_error: Overloaded", "Connection error.", "invalid_request_error: prompt is too long"])), "other");
			if (rng.chance(0.3)) continue;
			put(user("Retry.", 0), "user");
			finalAnswer(cjk);
		} else if (ending < 0.045) finalAnswer(cjk, "length");
		else finalAnswer(cjk);
		if (rng.chance(0.02)) put(entry("label", { targetId: leaf, label: identifier(rng, 1.5) }), "other");
	}
	return { sessionId, fileName, stats: { bytes, lines: lineCount, questions, byKind: stats } };
}

/** Prose of about `chars` characters (some of it CJK when asked). */
function prose(rng: Rng, chars: number, cjk: boolean): string {
	const parts: string[] = [];
	let n = 0;
	while (n < chars) {
		const p = cjk && rng.chance(0.7) ? cjkText(rng, rng.range(20, 120)) : paragraph(rng, rng.range(1, 4));
		parts.push(p);
		n += p.length + 2;
	}
	const out = parts.join("\n\n");
	return out.length > chars * 1.5 + 40 ? out.slice(0, Math.ceil(chars * 1.5)).replace(/[\ud800-\udbff]$/, "") : out;
}

function toolArguments(rng: Rng, name: string): Json {
	switch (name) {
		case "bash":
			return {
				command: `${rng.pick(["npm test --", "npx tsc --noEmit", "git diff", "rg -n", "ls", "cat", "node scripts/check.mjs", "git log --oneline -20"])} ${filePath(rng)}`,
				...(rng.chance(0.3) ? { timeout: 120 } : {}),
			};
		case "read":
			return { path: filePath(rng), ...(rng.chance(0.2) ? { offset: rng.range(1, 400), limit: rng.range(20, 200) } : {}) };
		case "edit":
			return { path: filePath(rng), oldText: codeSlice(rng, rng.logNormal(300, 0.9, 20, 6_000)), newText: codeSlice(rng, rng.logNormal(350, 0.9, 20, 8_000)) };
		case "write":
			return { path: filePath(rng), content: codeSlice(rng, rng.logNormal(2_000, 1, 100, 30_000)) };
		default:
			return { pattern: identifier(rng), path: "src" };
	}
}

/** Mostly small outputs, a long tail up to 200 KB; a few errors and images. */
function toolResult(rng: Rng, toolCallId: string, toolName: string, args: Json, at: number): Json {
	const r = rng.next();
	const size =
		r < 0.7
			? rng.logNormal(700, 1, 20, 4_000)
			: r < 0.96
				? rng.logNormal(7_500, 0.7, 2_000, 40_000)
				: r < 0.99
					? rng.logNormal(40_000, 0.5, 20_000, 100_000)
					: rng.range(100_000, 200_000);
	const isError = rng.chance(0.06);
	const content: Json[] = [];
	let details: Json | undefined;
	if (toolName === "read" && rng.chance(0.01)) {
		content.push({ type: "text", text: "Read image file [image/png]" });
		content.push({ type: "image", data: base64Of(rng, rng.logNormal(40_000, 0.8, 2_000, 200_000)), mimeType: "image/png" });
	} else if (toolName === "edit" && !isError) {
		content.push({ type: "text", text: `Successfully replaced 1 block(s) in ${String(args.path)}.` });
		details = { diff: codeSlice(rng, Math.min(size, 6_000)), firstChangedLine: rng.range(1, 500) };
	} else {
		let text = codeSlice(rng, size);
		if (toolName === "bash" && isError) text += `\n\nCommand exited with code ${rng.range(1, 2)}`;
		if (rng.chance(0.05)) text += `\n${cjkText(rng, 30)}`;
		content.push({ type: "text", text });
	}
	const message: Json = { role: "toolResult", toolCallId, toolName, content };
	if (details) message.details = details;
	message.isError = isError;
	message.timestamp = at;
	return message;
}

/** A UUIDv7 (as Pi's session ids) from a time and the rng. */
function uuidV7(rng: Rng, ms: number): string {
	const time = ms.toString(16).padStart(12, "0");
	const hex = (n: number) => Array.from({ length: n }, () => (rng.u32() & 15).toString(16)).join("");
	return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex(3)}-${(8 + (rng.u32() & 3)).toString(16)}${hex(3)}-${hex(12)}`;
}
