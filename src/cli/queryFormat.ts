/**
 * Human output of `sessions`, `search` and `read`: aligned columns, the match highlighted when
 * `color` is on (stdout is a terminal). With `columns` (the terminal's width), every line fits in
 * it: tables keep their ids (what people copy into `read`) and times whole, drop or shorten their
 * other columns, and cut free text (titles, previews, snippets) with `…`; paragraphs are wrapped.
 * Without it (a pipe, a file), lines are whole. `--json` bypasses all of this and prints the
 * service's object as it is.
 */
import { CHILDREN_PAGE_SIZE, formatRange, formatTime, lastPageOffset, oneLine } from "../services/history/query/index.ts";
import type { NodeRef, ReadResult, SearchHit, SearchResult, SessionListResult } from "../services/history/query/index.ts";
import { type Column, columnsTable, displayWidth, fittingLayout, printable, tailToWidth, truncateToWidth, wrapLine, wrapText } from "./format.ts";
import { markedSnippet, matchParts, shownQuery } from "../services/history/query/printable.ts";
import { idEndsOfSharedTitles } from "../services/history/query/sessionLabels.ts";
import type { LookedIn } from "./emptyHistory.ts";

export { wrapText } from "./format.ts";

/** How human output is laid out. */
export interface LayoutOptions {
	/** The terminal's width: every line fits in it. None: lines are whole (a pipe, a file). */
	readonly columns?: number | undefined;
	/** The filters given (`--session X --from Y`): an empty answer names them, the likelier cause than the words. */
	readonly filters?: string | undefined;
}

export interface FormatOptions extends LayoutOptions {
	/** ANSI highlighting (bold + inverse) of matches. */
	readonly color: boolean;
}

/** Under a table's row: what did not fit beside it (a snippet, a preview). */
const UNDER = "      ";

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

export function formatSessions(result: SessionListResult, options: LayoutOptions = {}): string {
	if (result.total === 0)
		return options.filters ? wrapText(`No sessions with ${options.filters}: widen or drop the filter.`, options.columns) : "No sessions found.";
	if (result.sessions.length === 0) return wrapText(`${result.total} session(s); ${emptyPage(result)}`, options.columns);
	const { sessions } = result;
	const time: Column = { header: "last activity", cells: sessions.map((s) => formatTime(s.lastAt)) };
	const id: Column = { header: "session (read it by this id)", cells: sessions.map((s) => s.sessionId) };
	const qa: Column = { header: "Q&A", cells: sessions.map((s) => s.qa) };
	const title = (min: number): Column => ({ header: "title", cells: sessions.map((s) => printable(oneLine(s.title, TITLE_WIDTH))), free: { min } });
	const full = [
		time,
		id,
		qa,
		{ header: "branches", cells: sessions.map((s) => s.branches) },
		{ header: "incomplete", cells: sessions.map((s) => s.incomplete) },
		{ header: "summaries ready/pending", cells: sessions.map((s) => `${s.summariesReady}/${s.summariesPending}`) },
		title(20),
	];
	let text: string;
	if (options.columns === undefined) text = columnsTable(full);
	else {
		// Narrower: branches, incomplete Q&A and summaries in one column, only what is worth saying
		// (`3 br · 1 open · 0/5 sum`); then without them; then without the Q&A count, the title.
		const details: Column = {
			header: "details",
			cells: sessions.map((s) =>
				[
					s.branches > 1 ? `${s.branches} br` : "",
					s.incomplete > 0 ? `${s.incomplete} open` : "",
					s.summariesReady + s.summariesPending > 0 ? `${s.summariesReady}/${s.summariesPending} sum` : "",
				]
					.filter(Boolean)
					.join(" · "),
			),
		};
		const layouts = [full, [time, id, qa, details, title(12)], [time, id, qa, title(12)], [time, id, title(8)], [time, id], [id]];
		text = columnsTable(layouts[fittingLayout(layouts, options.columns)] as Column[], options.columns);
	}
	return [
		wrapText(`Sessions ${shown(result, sessions.length)}, newest first (times in UTC):`, options.columns),
		"",
		text,
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

/**
 * The snippet on one line of at most `width` columns, the match highlighted: cut with `…` around
 * the match, which stays in sight (up to a third of the room before it, the rest after it).
 */
export function fittedSnippetLine(hit: SearchHit, color: boolean, width: number): string {
	const [before, match, after] = matchParts(hit.snippet, hit.match);
	const [b, m, a] = [before, match, after].map(displayWidth) as [number, number, number];
	if (b + m + a <= width) return before + highlight(match, color) + after;
	if (m + 2 > width) return highlight(truncateToWidth(match, width), color);
	const room = width - m;
	const beforeShown = tailToWidth(before, a >= room - Math.floor(room / 3) ? Math.floor(room / 3) : room - a);
	return beforeShown + highlight(match, color) + truncateToWidth(after, room - displayWidth(beforeShown));
}

export function formatSearch(result: SearchResult, options: FormatOptions): string {
	const count = result.groups.reduce((n, g) => n + g.hits.length, 0);
	const { columns } = options;
	if (result.total === 0)
		return wrapText(
			options.filters
				? `No hits for ${shownQuery(result.query)} with ${options.filters}: widen or drop the filter (or try another wording: matching is by shared text).`
				: `No hits for ${shownQuery(result.query)}. Matching is by shared text: try another wording.`,
			columns,
		);
	if (count === 0) return wrapText(`${result.total} hit(s) for ${shownQuery(result.query)}; ${emptyPage(result)}`, columns);
	const lines = [wrapText(`Hits for ${shownQuery(result.query)}: ${shown(result, count)} (times in UTC)`, columns)];
	const sessionName = sessionNames(result.groups.flatMap((g) => g.hits));
	for (const group of result.groups) {
		lines.push("", `${groupName(group.level)}:`);
		const { hits } = group;
		const id: Column = { header: "id", cells: hits.map((h) => h.id) };
		const time: Column = { header: "time", cells: hits.map((h) => formatTime(h.endedAt)) };
		const session = (min: number): Column => ({ header: "session", cells: hits.map(sessionName), free: { min } });
		const flags: Column = { header: "flags", cells: hits.map(hitFlags) };
		// Narrower: the flags move to the start of the snippet's line; then the session's title goes.
		const layouts = [[id, time, session(16), flags], [id, time, session(8)], [id, time], [id]];
		const layout = columns === undefined ? 0 : fittingLayout(layouts, columns - 2);
		const [head, ...body] = columnsTable(layouts[layout] as Column[], columns === undefined ? undefined : columns - 2).split("\n");
		lines.push(`  ${head}`);
		body.forEach((row, i) => {
			const hit = hits[i] as SearchHit;
			lines.push(`  ${row}`);
			if (columns === undefined) {
				lines.push(`${UNDER}${snippetLine(hit, options.color)}`);
				return;
			}
			const flagged = layout > 0 && hitFlags(hit) !== "" ? `[${hitFlags(hit)}] ` : "";
			lines.push(`${UNDER}${flagged}${fittedSnippetLine(hit, options.color, columns - UNDER.length - displayWidth(flagged))}`);
		});
	}
	const notes = pagingNotes(result);
	if (notes.length > 0) lines.push("", ...notes);
	return lines.join("\n");
}

/**
 * The session column's text of each hit: its title, after the end of its id where another session
 * on the page has the same title (`idEndsOfSharedTitles`).
 */
function sessionNames(hits: readonly SearchHit[]): (hit: SearchHit) => string {
	const ends = idEndsOfSharedTitles(hits);
	return (h) => {
		const end = ends.get(h.sessionId);
		return `${end === undefined ? "" : `${end} `}${printable(oneLine(h.sessionTitle, TITLE_WIDTH))}`;
	};
}

function refTable(refs: readonly NodeRef[], columns: number | undefined): string {
	const kinds = refs.map((r) => (r.kind === "summary" ? `summary L${r.level}` : r.kind === "qa" ? "Q&A" : "session"));
	const times = refs.map((r) => formatRange(r.startedAt, r.endedAt));
	const previews = refs.map((r) => printable(oneLine(r.preview, 72)));
	const id: Column = { header: "id", cells: refs.map((r) => r.id) };
	const kind: Column = { header: "kind", cells: kinds };
	const time: Column = { header: "time (UTC)", cells: times };
	const preview: Column = { header: "preview", cells: previews, free: { min: 16 } };
	// Narrower: the preview goes under its row, then with the kind, then with the time too.
	const layouts = [[id, kind, time, preview], [id, kind, time], [id, time], [id]];
	const width = columns === undefined ? undefined : columns - 2;
	const layout = width === undefined ? 0 : fittingLayout(layouts, width);
	const [head, ...body] = columnsTable(layouts[layout] as Column[], width).split("\n");
	const lines = [`  ${head}`];
	body.forEach((row, i) => {
		lines.push(`  ${row}`);
		if (columns === undefined || layout === 0) return;
		const under = [layout >= 2 ? kinds[i] : "", layout >= 3 ? times[i] : "", previews[i]].filter(Boolean).join(" · ");
		if (under !== "") lines.push(`${UNDER}${truncateToWidth(under, columns - UNDER.length)}`);
	});
	return lines.join("\n");
}

/** `Session: <title> (<id>)`, the title cut to keep the line in `columns` (the id whole). */
function sessionLine(title: string, sessionId: string, columns: number | undefined): string {
	const line = `Session: ${printable(title)} (${sessionId})`;
	if (columns === undefined) return line;
	const room = columns - displayWidth(`Session:  (${sessionId})`);
	if (room < 8) return wrapLine(line.replace(/\s+/g, " "), columns).join("\n");
	return `Session: ${truncateToWidth(printable(title.replace(/\s+/g, " ").trim()), room)} (${sessionId})`;
}

export function formatRead(result: ReadResult, options: LayoutOptions = {}): string {
	const { columns } = options;
	const kind = result.kind === "summary" ? `summary, level ${result.level}` : result.kind === "qa" ? "Q&A" : "session";
	const flags = [result.ready ? undefined : "not summarized yet", result.completed ? undefined : "incomplete", result.stale ? "stale" : undefined].filter(
		Boolean,
	);
	const source =
		result.source.entryIds.length > 0
			? `session ${result.source.sessionId}, entries ${result.source.entryIds.join(", ")}`
			: `session ${result.source.sessionId}`;
	const fitted = (line: string, continuation?: string) => wrapText(line, columns, continuation);
	const rule = "─".repeat(Math.min(40, columns ?? 40));
	const lines = [
		fitted(`${result.id} · ${kind} · ${formatRange(result.startedAt, result.endedAt)} UTC${flags.length > 0 ? ` · ${flags.join(", ")}` : ""}`),
		sessionLine(result.sessionTitle, result.sessionId, columns),
		fitted(`Source: ${source}`, "        "),
	];
	if (result.parents.length > 0) lines.push("", "Parents:", refTable(result.parents, columns));
	lines.push("", rule);
	if (result.totalLength === 0) lines.push(fitted(result.ready ? "(empty)" : "(this summary has not been generated yet; its children below are readable)"));
	// (`result.offset` is where the slice starts, the asked offset clamped to the end: not what was typed.)
	else if (result.body.length === 0)
		lines.push(
			fitted(
				result.limit === 0
					? `(nothing shown with --limit 0: the text is ${result.totalLength} characters long)`
					: `(--offset is past the end: the text is ${result.totalLength} characters long)`,
			),
		);
	else lines.push(wrapText(printable(result.body), columns));
	lines.push(rule);
	const end = result.offset + result.body.length;
	// (An empty page already said why, with the text's length.)
	if (result.body.length > 0 && (result.offset > 0 || result.nextOffset !== null))
		lines.push(fitted(`Characters ${result.offset}–${end} of ${result.totalLength}${result.clamped ? ` (--limit lowered to ${result.limit})` : ""}.`));
	if (result.nextOffset !== null) lines.push(`More: --offset ${result.nextOffset}`);
	if (result.totalChildren > 0 && result.children.length === 0) {
		const last = lastPageOffset(result.totalChildren, CHILDREN_PAGE_SIZE);
		lines.push(
			"",
			fitted(`Children: ${result.totalChildren}; none from --children-offset ${result.childrenOffset}: the last page starts at --children-offset ${last}.`),
		);
	} else if (result.totalChildren > 0) {
		lines.push("", fitted(`Children ${result.childrenOffset + 1}–${result.childrenOffset + result.children.length} of ${result.totalChildren}:`));
		lines.push(refTable(result.children, columns));
		if (result.nextChildrenOffset !== null) lines.push(`More children: --children-offset ${result.nextChildrenOffset}`);
	}
	return lines.join("\n");
}
