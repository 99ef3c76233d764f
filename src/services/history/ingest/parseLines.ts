import { map, type OperatorFunction } from "rxjs";
import { scanMessageLine } from "./scanMessageLine.ts";
import type { EntryLite, MessageLite, ParsedLine, SessionHeaderLine } from "./sessionEntry.ts";
import type { SourceLine } from "./splitLines.ts";

const decoder = new TextDecoder("utf-8");

/**
 * Parses lines of a session file into trimmed entries.
 *
 * Never errors the stream: a line that is not a JSON object of a known shape becomes a
 * `rejected` item with a reason. A last line without its newline that does not parse is `held`
 * (a torn write), not rejected.
 */
export function parseLines(): OperatorFunction<SourceLine[], ParsedLine[]> {
	return map((lines) => lines.map(parseLine));
}

/**
 * Parses one line. Exported for tests and for callers that already hold a single line.
 *
 * A `message` line in Pi's own layout is read on its raw bytes first (`scanMessageLine`: validated
 * as JSON, only the kept strings decoded); any other line, or one the fast path is not sure of,
 * is decoded and parsed in full. Both give the same result for every line the fast path takes.
 */
export function parseLine(source: SourceLine): ParsedLine {
	if (source.oversized !== undefined) {
		if (!source.terminated) return { kind: "held", line: source.line, bytes: source.oversized };
		return { kind: "rejected", line: source.line, reason: `a line of ${source.oversized} bytes, longer than pbot reads: not read`, bytes: source.oversized };
	}
	const entry = scanMessageLine(source.bytes, source.line);
	if (entry) return { kind: "entry", entry };
	return parseLineInFull(source);
}

/** Parses one line by decoding it and `JSON.parse`: the reference the fast path must agree with. */
export function parseLineInFull(source: SourceLine): ParsedLine {
	let text: string;
	let value: unknown;
	try {
		text = decoder.decode(source.bytes);
	} catch (err) {
		return { kind: "rejected", line: source.line, reason: `cannot be decoded (${(err as Error).message})`, bytes: source.bytes.length };
	}
	try {
		value = JSON.parse(text);
	} catch (err) {
		if (!source.terminated) return { kind: "held", line: source.line, bytes: source.bytes.length };
		return reject(source.line, `not valid JSON (${(err as Error).message})`, text);
	}
	if (!isObject(value)) return reject(source.line, "not a JSON object", text);
	const type = value.type;
	if (typeof type !== "string" || type === "") return reject(source.line, "no entry type", text);
	if (type === "session") return parseHeader(source.line, value, text);
	return parseEntry(source.line, type, value, text);
}

function parseHeader(line: number, value: Record<string, unknown>, text: string): ParsedLine {
	if (typeof value.id !== "string" || value.id === "") return reject(line, "session header without an id", text);
	const version = typeof value.version === "number" && Number.isFinite(value.version) ? value.version : 1;
	const header: SessionHeaderLine = {
		type: "session",
		line,
		version,
		id: value.id,
		...(typeof value.timestamp === "string" ? { timestamp: value.timestamp } : {}),
		...(typeof value.cwd === "string" ? { cwd: value.cwd } : {}),
		...(typeof value.parentSession === "string" ? { parentSession: value.parentSession } : {}),
	};
	return { kind: "header", header };
}

function parseEntry(line: number, type: string, value: Record<string, unknown>, text: string): ParsedLine {
	const base: { -readonly [K in keyof EntryLite]: EntryLite[K] } = { type, line };
	if (value.id !== undefined) {
		if (typeof value.id !== "string" || value.id === "") return reject(line, "entry id is not a string", text);
		base.id = value.id;
	}
	if (typeof value.parentId === "string" || value.parentId === null) base.parentId = value.parentId;
	if (typeof value.timestamp === "string") base.timestamp = value.timestamp;

	switch (type) {
		case "message": {
			const message = parseMessage(value.message);
			if (!message) return reject(line, "message entry without a message object with a role", text);
			base.message = message;
			break;
		}
		case "session_info":
			if (typeof value.name === "string") base.name = value.name;
			break;
		case "label":
			if (typeof value.targetId === "string") base.targetId = value.targetId;
			if (typeof value.label === "string") base.label = value.label;
			break;
		default:
			// model_change, compaction, branch_summary, custom, custom_message…: kept for the tree only.
			break;
	}
	return { kind: "entry", entry: base };
}

function parseMessage(raw: unknown): MessageLite | undefined {
	if (!isObject(raw) || typeof raw.role !== "string") return undefined;
	const role = raw.role === "hookMessage" ? "custom" : raw.role;
	const out: { -readonly [K in keyof MessageLite]: MessageLite[K] } = { role, text: "", images: 0, toolCalls: 0 };
	if (typeof raw.timestamp === "number" && Number.isFinite(raw.timestamp)) out.at = raw.timestamp;
	if (role === "user" || role === "assistant") {
		const { text, images, toolCalls } = readContent(raw.content);
		out.text = text;
		out.images = images;
		out.toolCalls = toolCalls;
	}
	if (role === "assistant") {
		if (typeof raw.stopReason === "string") out.stopReason = raw.stopReason;
		if (typeof raw.errorMessage === "string") out.error = raw.errorMessage;
	}
	return out;
}

/** Text blocks joined by a blank line; thinking and tool calls are counted, never kept. */
function readContent(content: unknown): { text: string; images: number; toolCalls: number } {
	if (typeof content === "string") return { text: content, images: 0, toolCalls: 0 };
	if (!Array.isArray(content)) return { text: "", images: 0, toolCalls: 0 };
	const texts: string[] = [];
	let images = 0;
	let toolCalls = 0;
	for (const block of content) {
		if (!isObject(block)) continue;
		if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
		else if (block.type === "image") images++;
		else if (block.type === "toolCall") toolCalls++;
	}
	return { text: texts.join("\n\n"), images, toolCalls };
}

/** A rejected line: where and why, and how long — never its text (it can hold anything). */
function reject(line: number, reason: string, text: string): ParsedLine {
	return { kind: "rejected", line, reason, bytes: Buffer.byteLength(text) };
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
