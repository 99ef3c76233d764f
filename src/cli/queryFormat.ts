/**
 * Human output of `sessions`, `search` and `read`: aligned columns, the match highlighted when
 * `color` is on (stdout is a terminal). `--json` bypasses all of this and prints the service's
 * object as it is.
 */
import { CHILDREN_PAGE_SIZE, formatRange, formatTime, lastPageOffset, oneLine } from "../services/history/query/index.ts";
import type { NodeRef, ReadResult, SearchHit, SearchResult, SessionListResult } from "../services/history/query/index.ts";
import { printable, table } from "./format.ts";
import { markedSnippet } from "../services/history/query/printable.ts";
import type { LookedIn } from "./emptyHistory.ts";

export interface FormatOptions {
	/** ANSI highlighting (bold + inverse) of matches. */
	readonly color: boolean;
}

const HIGHLIGHT_ON = "\x1b[1;7m";
const HIGHLIGHT_OFF = "\x1b[22;27m";
const TITLE_WIDTH = 48;

function highlight(text: string, color: boolean): string {
	return color ? `${HIGHLIGHT_ON}${text}${HIGHLIGHT_OFF}` : text;
}

function shown(result: { offset: number; total: number; nextOffset: number | null }, count: number): string {
	return `${result.offset + 1}–${result.offset + count} of ${result.total}`;
}

/** Why a page of a non-empty answer is empty: a count was asked (`--limit 0`), or the offset is past the end. */
function emptyPage(result: { offset: number; total: number; limit: number }): string {
	if (result.limit === 0) return "none listed (--limit 0 counts only).";
	return `none from --offset ${result.offset}: the last page starts at --offset ${lastPageOffset(result.total, result.limit)}.`;
}

function pagingNotes(result: { nextOffset: number | null; clamped: boolean; limit: number }): string[] {
	const notes: string[] = [];
	if (result.clamped) notes.push(`(--limit lowered to the maximum, ${result.limit})`);
	if (result.nextOffset !== null) notes.push(`More: --offset ${result.nextOffset}`);
	return notes;
}

/**
 * What a person reads under an empty answer when the workspace has no sessions at all: which
 * workspace, and where its sessions were looked for. A first run in the wrong folder otherwise
 * only says "No sessions found." (`named`: the folders came from `--sessions`).
 */
export function formatEmptyHistory(
	looked: { readonly workspace: string; readonly folders: readonly LookedIn[]; readonly above?: string },
	named: boolean,
): string {
	const { workspace, folders, above } = looked;
	// What is in each folder: nothing, or files that gave no session of this workspace (named
	// folders take every file; Pi's own folder only those whose working directory is this one).
	const state = (f: LookedIn) =>
		!f.exists ? " (not there)" : f.files === 0 ? "" : ` (${f.files} .jsonl file(s) there, ${named ? "none holding a session" : "none of this folder"})`;
	const where = folders.map((f) => `${f.path}${state(f)}`).join(", ");
	const lines = named
		? [`The history of ${workspace} is empty: no Pi sessions in ${where}.`]
		: [
				`The history of ${workspace} is empty: Pi keeps this folder's sessions in ${where}.`,
				above
					? `Pi has sessions for ${above}, a folder above this one: run pbot-history there, or pass --workspace ${above}.`
					: "Run pbot-history in the folder Pi ran in (or pass --workspace DIR), or read session files from other folders with --sessions DIR.",
			];
	// `--sessions ~/.pi/agent/sessions`: the folder of every workspace's folder, read as one.
	for (const f of folders) {
		if (f.insideCount === 0) continue;
		const more = f.insideCount > f.inside.length ? `, … (${f.insideCount} in all)` : "";
		lines.push(
			`${f.path} holds no session files itself, but ${f.insideCount === 1 ? "a folder in it does" : `${f.insideCount} folders in it do`}: Pi keeps each workspace's sessions in a folder of its own. Name the one to read: ${f.inside.join(", ")}${more}.`,
		);
	}
	return lines.join("\n");
}

/** Longest query echoed whole in a heading, in code points; a longer one (a pasted paragraph) is cut and its length said. */
const QUERY_SHOWN = 80;

/** The query as the heading shows it: quoted and escaped (a newline reads `\\n`), cut after `QUERY_SHOWN` code points. */
export function quotedQuery(query: string): string {
	const points = Array.from(query);
	if (points.length <= QUERY_SHOWN) return JSON.stringify(query);
	return `${JSON.stringify(points.slice(0, QUERY_SHOWN).join(""))}… (${points.length} characters)`;
}

export function formatSessions(result: SessionListResult): string {
	if (result.total === 0) return "No sessions found.";
	if (result.sessions.length === 0) return `${result.total} session(s); ${emptyPage(result)}`;
	const rows = result.sessions.map((s) => [
		formatTime(s.lastAt),
		s.sessionId,
		s.qa,
		s.branches,
		s.incomplete,
		`${s.summariesReady}/${s.summariesPending}`,
		printable(oneLine(s.title, TITLE_WIDTH)),
	]);
	return [
		`Sessions ${shown(result, result.sessions.length)}, newest first (times in UTC):`,
		"",
		table(["last activity", "session (read it by this id)", "Q&A", "branches", "incomplete", "summaries ready/pending", "title"], rows),
		...pagingNotes(result).map((n, i) => (i === 0 ? `\n${n}` : n)),
	].join("\n");
}

function groupName(level: number): string {
	return level === 0 ? "Q&A originals" : `Level-${level} summaries`;
}

function hitFlags(hit: SearchHit): string {
	const flags: string[] = [];
	if (!hit.completed) flags.push("incomplete");
	if (hit.kind === "summary") flags.push(hit.verified ? "verified" : "unverified");
	if (hit.stale) flags.push("stale");
	return flags.join(", ");
}

/** The snippet on one line, the match highlighted. */
export function snippetLine(hit: SearchHit, color: boolean): string {
	return markedSnippet(hit, (match) => highlight(match, color));
}

export function formatSearch(result: SearchResult, options: FormatOptions): string {
	const count = result.groups.reduce((n, g) => n + g.hits.length, 0);
	if (result.total === 0) return `No hits for ${quotedQuery(result.query)}. Matching is by shared text: try another wording.`;
	if (count === 0) return `${result.total} hit(s) for ${quotedQuery(result.query)}; ${emptyPage(result)}`;
	const lines = [`Hits for ${quotedQuery(result.query)}: ${shown(result, count)} (times in UTC)`];
	for (const group of result.groups) {
		lines.push("", `${groupName(group.level)}:`);
		const rows = group.hits.map((h) => [h.id, formatTime(h.endedAt), printable(oneLine(h.sessionTitle, TITLE_WIDTH)), hitFlags(h)]);
		const [head, ...body] = table(["id", "time", "session", "flags"], rows).split("\n");
		lines.push(`  ${head}`);
		body.forEach((row, i) => {
			lines.push(`  ${row}`);
			lines.push(`      ${snippetLine(group.hits[i] as SearchHit, options.color)}`);
		});
	}
	const notes = pagingNotes(result);
	if (notes.length > 0) lines.push("", ...notes);
	return lines.join("\n");
}

function refTable(refs: readonly NodeRef[]): string {
	const rows = refs.map((r) => [
		r.id,
		r.kind === "summary" ? `summary L${r.level}` : r.kind === "qa" ? "Q&A" : "session",
		formatRange(r.startedAt, r.endedAt),
		printable(oneLine(r.preview, 72)),
	]);
	return table(["id", "kind", "time (UTC)", "preview"], rows)
		.split("\n")
		.map((l) => `  ${l}`)
		.join("\n");
}

export function formatRead(result: ReadResult): string {
	const kind = result.kind === "summary" ? `summary, level ${result.level}` : result.kind === "qa" ? "Q&A" : "session";
	const flags = [result.ready ? undefined : "not summarized yet", result.completed ? undefined : "incomplete", result.stale ? "stale" : undefined].filter(
		Boolean,
	);
	const source =
		result.source.entryIds.length > 0
			? `session ${result.source.sessionId}, entries ${result.source.entryIds.join(", ")}`
			: `session ${result.source.sessionId}`;
	const lines = [
		`${result.id} · ${kind} · ${formatRange(result.startedAt, result.endedAt)} UTC${flags.length > 0 ? ` · ${flags.join(", ")}` : ""}`,
		`Session: ${printable(result.sessionTitle)} (${result.sessionId})`,
		`Source: ${source}`,
	];
	if (result.parents.length > 0) lines.push("", "Parents:", refTable(result.parents));
	lines.push("", "─".repeat(40));
	if (result.totalLength === 0) lines.push(result.ready ? "(empty)" : "(this summary has not been generated yet; its children below are readable)");
	else if (result.body.length === 0) lines.push(`(nothing from --offset ${result.offset}: the text is ${result.totalLength} characters long)`);
	else lines.push(printable(result.body));
	lines.push("─".repeat(40));
	const end = result.offset + result.body.length;
	if (result.offset > 0 || result.nextOffset !== null)
		lines.push(`Characters ${result.offset}–${end} of ${result.totalLength}${result.clamped ? ` (--limit lowered to ${result.limit})` : ""}.`);
	if (result.nextOffset !== null) lines.push(`More: --offset ${result.nextOffset}`);
	if (result.totalChildren > 0 && result.children.length === 0) {
		const last = lastPageOffset(result.totalChildren, CHILDREN_PAGE_SIZE);
		lines.push(
			"",
			`Children: ${result.totalChildren}; none from --children-offset ${result.childrenOffset}: the last page starts at --children-offset ${last}.`,
		);
	} else if (result.totalChildren > 0) {
		lines.push("", `Children ${result.childrenOffset + 1}–${result.childrenOffset + result.children.length} of ${result.totalChildren}:`);
		lines.push(refTable(result.children));
		if (result.nextChildrenOffset !== null) lines.push(`More children: --children-offset ${result.nextChildrenOffset}`);
	}
	return lines.join("\n");
}
