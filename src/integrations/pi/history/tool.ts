import { StringEnum, Type, type Static } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import type { ReadResult, SearchResult, SessionListResult } from "../../../services/history/query/types.ts";
import { sessionFactsOf } from "./piSession.ts";
import { hitsText, readText, sessionsText } from "./resultText.ts";
import { printable } from "../../../services/history/query/printable.ts";
import type { HistoryRuntime } from "./runtime.ts";

export const historyToolParameters = Type.Object({
	action: StringEnum(["search", "read"] as const, {
		description: "search: find past Q&A and summaries by text (or list sessions without a query). read: open one node by id.",
	}),
	query: Type.Optional(
		Type.String({
			description: "search: case-insensitive contiguous text matched against every original Q&A and every summary. Omit to list sessions instead.",
		}),
	),
	sessionId: Type.Optional(Type.String({ description: "search: only this session (an id from a previous result)." })),
	from: Type.Optional(Type.String({ description: "search: ISO-8601 date or date-time; keep what overlaps [from, to]." })),
	to: Type.Optional(Type.String({ description: "search: ISO-8601 date or date-time (a date means the whole day)." })),
	id: Type.Optional(Type.String({ description: "read: a node id from search or read (session, summary or Q&A)." })),
	offset: Type.Optional(
		Type.Integer({ minimum: 0, description: "search: hits to skip (use nextOffset). read: body offset in UTF-16 units (use nextOffset)." }),
	),
	limit: Type.Optional(
		Type.Integer({ minimum: 0, description: "search: hits per page (default 20, at most 50). read: body characters (default 12000, at most 24000)." }),
	),
	childrenOffset: Type.Optional(Type.Integer({ minimum: 0, description: "read: children to skip, 20 per page (use nextChildrenOffset)." })),
});

export type HistoryToolParams = Static<typeof historyToolParameters>;
/** A result, and what went wrong on the way (an archive refused, a file skipped): for the model and the person. */
export type HistoryToolDetails = (SearchResult | SessionListResult | ReadResult) & { readonly warnings?: readonly string[] };

/** Warnings said in a tool result's text: the first few, and how many more. */
const WARNINGS_SHOWN = 3;

/** The result as the tool returns it: its text with a short warnings line, its details with every warning. */
function withWarnings(text: string, result: SearchResult | SessionListResult | ReadResult, warnings: readonly string[]) {
	if (warnings.length === 0) return { content: [{ type: "text" as const, text }], details: result as HistoryToolDetails };
	const shown = warnings.slice(0, WARNINGS_SHOWN).join("; ");
	const more = warnings.length > WARNINGS_SHOWN ? ` (and ${warnings.length - WARNINGS_SHOWN} more)` : "";
	return { content: [{ type: "text" as const, text: `${text}\n\nWarnings: ${shown}${more}` }], details: { ...result, warnings } as HistoryToolDetails };
}

const DESCRIPTION = [
	"Search and read this workspace's past Pi conversations: every question and final answer (tool output excluded), and summaries of every 4 consecutive Q&A, of every 4 summaries, and so on.",
	"action=search with query: case-insensitive substring match; hits come grouped by level (Q&A originals, level-1 summaries, …) with ids and snippets. Without query: the sessions, newest first.",
	"action=read with id: the node's text, its parents and children (ids), and its source (session id and native entry ids).",
	"Summary hits are clues: read the Q&A they cover before relying on a conclusion. Searching never calls a model or changes anything.",
].join(" ");

/** The `pbot_history` tool: the same service the command and the CLI use. */
export function registerHistoryTool(pi: ExtensionAPI, runtime: HistoryRuntime): void {
	pi.registerTool({
		name: "pbot_history",
		label: "pbot history",
		description: DESCRIPTION,
		promptSnippet: "pbot_history: search and read this workspace's past conversations (when did we decide X, and why?)",
		promptGuidelines: [
			"When the user asks about earlier work, decisions or conversations in this project, search with pbot_history before answering from memory.",
			"Search with a distinctive word or short phrase; matching is by shared text, so when nothing matches, retry with other wordings, synonyms or a shorter phrase before concluding there is nothing.",
			"Summary hits are retrieval clues: read (action=read) the original Q&A they cover before stating a conclusion, and quote the original.",
			"Follow nextOffset / nextChildrenOffset to page; filter with sessionId, from and to when the user narrows the time or session.",
		],
		parameters: historyToolParameters,
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const facts = sessionFactsOf(ctx);
			const service = await runtime.forQuery(facts);
			if (params.action === "read") {
				if (!params.id) throw new Error("id: required for action=read (a node id from search or read)");
				const result = await service.read({
					id: params.id,
					...(params.offset !== undefined ? { offset: params.offset } : {}),
					...(params.limit !== undefined ? { limit: params.limit } : {}),
					...(params.childrenOffset !== undefined ? { childrenOffset: params.childrenOffset } : {}),
				});
				return withWarnings(readText(result), result, [...service.takeWarnings(), ...runtime.takeProblems()]);
			}
			const result = await service.search(
				{
					...(params.query !== undefined ? { query: params.query } : {}),
					...(params.sessionId !== undefined ? { sessionId: params.sessionId } : {}),
					...(params.from !== undefined ? { from: params.from } : {}),
					...(params.to !== undefined ? { to: params.to } : {}),
					...(params.offset !== undefined ? { offset: params.offset } : {}),
					...(params.limit !== undefined ? { limit: params.limit } : {}),
				},
				// The question being answered now is not a hit for the search made to answer it.
				{ inProgressOf: facts.sessionId },
			);
			const leftOut = result.kind === "hits" && result.leftOut ? `\n(Left out: the question in progress in this session, which this search is answering.)` : "";
			const text = (result.kind === "hits" ? hitsText(result) : sessionsText(result)) + leftOut;
			return withWarnings(text, result, [...service.takeWarnings(), ...runtime.takeProblems()]);
		},
		renderCall(args, theme) {
			const action = args.action as string | undefined;
			const what =
				action === "read"
					? `read ${printable(String(args.id ?? "?"))}`
					: action !== "search"
						? `${printable(String(action ?? "(no action)"))} (not an action: search or read)`
						: args.query
							? `search "${printable(String(args.query))}"`
							: "list sessions";
			return new Text(`${theme.fg("toolTitle", theme.bold("pbot_history"))} ${theme.fg("muted", what)}`, 0, 0);
		},
		renderResult(result, { expanded }, theme, context) {
			const details = result.details as HistoryToolDetails | undefined;
			const message = printable(result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n"));
			// A failed call (bad parameters, an unknown node) has no details to summarise: its message, in red.
			if (context?.isError || !isHistoryDetails(details)) {
				return new Text(theme.fg("error", expanded ? message : errorHeadline(message)), 0, 0);
			}
			const summary = oneLineSummary(details);
			const warned = details?.warnings?.length
				? ` ${theme.fg("warning", `(${details.warnings.length} warning${details.warnings.length === 1 ? "" : "s"})`)}`
				: "";
			if (!expanded) return new Text(`${theme.fg("success", summary)}${warned} ${theme.fg("dim", "(Ctrl+O to expand)")}`, 0, 0);
			return new Text(`${theme.fg("success", summary)}${warned}\n${message}`, 0, 0);
		},
	});
}

/**
 * A failed call's message as its collapsed view shows it: the first line, and when that line only
 * introduces the reason (Pi's "Validation failed for tool …:"), the reason's first line after it.
 */
export function errorHeadline(message: string): string {
	const lines = message
		.split("\n")
		.map((l) => l.trim())
		.filter((l) => l !== "");
	const first = lines[0] ?? "";
	return first.endsWith(":") && lines[1] !== undefined ? `${first} ${lines[1]}` : first;
}

/** Whether a tool result's details are a result of ours (a failed call's are not). */
function isHistoryDetails(details: unknown): details is HistoryToolDetails {
	const kind = (details as { kind?: unknown } | undefined)?.kind;
	return kind === "hits" || kind === "sessions" || kind === "qa" || kind === "summary" || kind === "session";
}

/** What a collapsed tool result says in one line. */
export function oneLineSummary(details: HistoryToolDetails): string {
	if (details.kind === "sessions") return `${details.total} session(s)`;
	if (details.kind === "hits") {
		const parts = details.groups.map((g) => `${g.level === 0 ? "Q&A" : `L${g.level}`} ${g.hits.length}`);
		return `${details.total} hit(s) for "${printable(details.query)}"${parts.length ? ` · ${parts.join(", ")}` : ""}`;
	}
	return `${details.kind === "qa" ? "Q&A" : details.kind === "summary" ? `L${details.level} summary` : "session"} ${details.id} · ${details.totalLength} chars · ${details.totalChildren} children`;
}
