import { type ExtensionAPI, type ExtensionCommandContext, getMarkdownTheme } from "@mariozechner/pi-coding-agent";
import type { HistoryService } from "../../../services/history/service/historyService.ts";
import type { ReadResult, SearchHit, SearchResult, SessionListResult } from "../../../services/history/query/types.ts";
import { sessionFactsOf } from "./piSession.ts";
import { hitsText, readText, sessionsText } from "./resultText.ts";
import type { HistoryRuntime } from "./runtime.ts";
import { HistoryViewer, refKind, span, type ViewerExit, type ViewerTheme } from "./viewer.ts";
import { printable, shownQuery } from "../../../services/history/query/printable.ts";
import { idEndsOfSharedTitles } from "../../../services/history/query/sessionLabels.ts";
import { HistoryPicker, type PickerDetail, type PickerPage } from "./picker.ts";
import type { MarkdownTheme, TUI } from "@mariozechner/pi-tui";
import { summariesCommand } from "./summariesCommand.ts";

const USAGE = "Usage: /pbot history [keyword]  ·  /pbot summaries [on|off|threshold <calls>]";
const SUBCOMMANDS = [
	{ value: "history", description: "browse sessions, or search with a keyword" },
	{ value: "summaries", description: "the summary backlog; on/off for earlier work, the threshold" },
];
/** How many sessions or hits a picker loads at a time (the service's most for a page). */
const PICKER_LIMIT = 50;

/** `/pbot history [keyword]`: a picker of recent sessions or of search hits, then the viewer. */
export function registerHistoryCommand(pi: ExtensionAPI, runtime: HistoryRuntime): void {
	pi.registerCommand("pbot", {
		description: "pbot history [keyword]: browse and search this workspace's past Pi sessions; pbot summaries: their summary backlog",
		getArgumentCompletions: (prefix: string) => {
			const word = prefix.trimStart();
			// Nothing to offer once a word is typed whole: a popup would take the Enter that should run it.
			if (word.includes(" ") || SUBCOMMANDS.some((c) => c.value === word)) return null;
			const offered = SUBCOMMANDS.filter((c) => c.value.startsWith(word)).map((c) => ({ value: `${c.value} `, label: c.value, description: c.description }));
			return offered.length > 0 ? offered : null;
		},
		handler: async (args, ctx) => {
			const trimmed = args.trim();
			const [sub = "", ...rest] = trimmed.split(/\s+/);
			if (sub === "summaries") {
				const answer = await summariesCommand(rest, sessionFactsOf(ctx), runtime).catch((err: Error) => ({
					text: `pbot summaries: ${err.message}`,
					level: "error" as const,
				}));
				say(ctx, answer.text, answer.level);
				return;
			}
			if (sub !== "history") {
				say(ctx, USAGE, "warning");
				return;
			}
			const keyword = rest.join(" ").trim();
			const facts = sessionFactsOf(ctx);
			const service = await runtime.forQuery(facts);
			try {
				// Let a background ingest finish first; the query below refreshes (once) itself.
				await runtime.settled();
				if (keyword === "") await pickSession(ctx, service, await service.sessions({ limit: PICKER_LIMIT }));
				else {
					const search = (offset: number) => service.search({ query: keyword, limit: PICKER_LIMIT, offset }, { inProgressOf: facts.sessionId });
					await pickHit(ctx, service, await search(0), search);
				}
			} catch (err) {
				say(ctx, `pbot history: ${(err as Error).message}`, "error");
			}
			for (const problem of [...service.takeWarnings(), ...runtime.takeProblems()]) say(ctx, `pbot history: ${problem}`, "warning");
		},
	});
}

async function pickSession(ctx: ExtensionCommandContext, service: HistoryService, result: SessionListResult): Promise<void> {
	if (!ctx.hasUI) return print(sessionsText(result));
	if (result.total === 0) return say(ctx, "pbot history: no sessions archived for this workspace yet.", "info");
	const digits = numberWidth(result.total);
	const rowsOf = (page: SessionListResult): PickerPage => ({
		items: page.sessions.map((s, i) => ({
			value: s.rootId,
			label: `${String(page.offset + i + 1).padStart(digits)}. ${printable(s.title)}  ·  ${span(s.lastAt, s.lastAt)}  ·  ${s.qa} Q&A${s.incomplete ? ` (${s.incomplete} open)` : ""}`,
		})),
		total: page.total,
		nextOffset: page.nextOffset,
	});
	const load = async (offset: number) => rowsOf(await service.sessions({ limit: PICKER_LIMIT, offset }));
	await browse(ctx, service, picker(ctx, `pbot history — ${result.total} session(s), newest first (times UTC)`, rowsOf(result), load));
}

async function pickHit(
	ctx: ExtensionCommandContext,
	service: HistoryService,
	result: SessionListResult | SearchResult,
	search: (offset: number) => Promise<SessionListResult | SearchResult>,
): Promise<void> {
	if (result.kind === "sessions") return pickSession(ctx, service, result);
	if (!ctx.hasUI) return print(hitsText(result));
	if (result.total === 0) return say(ctx, `pbot history: nothing matches ${shownQuery(result.query)}. Try other words or a shorter phrase.`, "info");
	const hits = new Map<string, SearchHit>();
	const digits = numberWidth(result.total);
	// Paging runs over the groups concatenated: a row's number is the page's offset plus its place in it.
	const rowsOf = (page: SearchResult): PickerPage => {
		const items: { value: string; label: string }[] = [];
		// Sessions of one title on the page (a fork, a copy) told apart as the CLI does.
		const ends = idEndsOfSharedTitles(page.groups.flatMap((g) => g.hits));
		for (const group of page.groups) {
			for (const hit of group.hits) {
				// The node's own words first (hits of one session differ there), then where and when.
				const level = group.level === 0 ? "Q&A" : `L${group.level}`;
				hits.set(hit.id, hit);
				items.push({
					value: hit.id,
					label: `${String(page.offset + items.length + 1).padStart(digits)}. [${level}] ${printable(hit.preview)}  ·  ${ends.has(hit.sessionId) ? `${ends.get(hit.sessionId)} ` : ""}${printable(hit.sessionTitle)}  ·  ${span(hit.startedAt, hit.endedAt)}`,
				});
			}
		}
		return { items, total: page.total, nextOffset: page.nextOffset };
	};
	const load = async (offset: number) => {
		const page = await search(offset);
		if (page.kind !== "hits") throw new Error("the search listed sessions instead of hits");
		return rowsOf(page);
	};
	const choose = picker(
		ctx,
		`pbot history — ${result.total} hit(s) for ${shownQuery(result.query)} (originals first, then summaries by level; times UTC)`,
		rowsOf(result),
		load,
		(value) => {
			const hit = hits.get(value);
			return hit ? { label: "match:", text: hit.snippet, match: hit.match } : undefined;
		},
	);
	await browse(ctx, service, choose, result.query);
}

/**
 * A picker, then the viewer on the chosen row; Backspace on the viewer's first node shows the
 * picker again as it was left (its rows, its selection), q or Esc in either closes.
 */
async function browse(ctx: ExtensionCommandContext, service: HistoryService, choose: () => Promise<string | undefined>, highlight?: string): Promise<void> {
	for (;;) {
		const picked = await choose();
		if (picked === undefined || (await view(ctx, service, picked, highlight)) !== "back") return;
	}
}

/** Digits of a row number, so the numbers line up (at least two, as with the first page of 50). */
function numberWidth(total: number): number {
	return Math.max(2, String(total).length);
}

/**
 * Shows a picker that fits the terminal and loads the rows after `first` as the selection reaches
 * them (`HistoryPicker`), and answers the row chosen; where custom components are not available
 * (RPC), Pi's own select with the first page's rows. `undefined`: closed without a choice. Every
 * call shows the same picker: the rows it has loaded and the row selected stay as they were left.
 */
function picker(
	ctx: ExtensionCommandContext,
	title: string,
	first: PickerPage,
	load: (offset: number) => Promise<PickerPage>,
	detail?: (value: string) => PickerDetail | undefined,
): () => Promise<string | undefined> {
	let component: HistoryPicker | undefined;
	// The showing's TUI and `done` (each `custom()` call hands its own `done`).
	let shown: { readonly tui: TUI; readonly done: (value: string | undefined) => void } | undefined;
	return async () => {
		const chosen = await ctx.ui.custom<{ readonly value: string | undefined }>((tui, theme, _keybindings, done) => {
			shown = { tui, done: (value) => done({ value }) };
			component ??= new HistoryPicker(title, first, {
				rows: () => shown?.tui.terminal.rows ?? 24,
				theme,
				done: (value) => shown?.done(value),
				load,
				redraw: () => shown?.tui.requestRender(),
				...(detail ? { detail } : {}),
			});
			return component;
		});
		if (chosen !== undefined) return chosen.value;
		const labels = first.items.map((i) => i.label ?? i.value);
		const choice = await ctx.ui.select(title, labels);
		return choice === undefined ? undefined : first.items[labels.indexOf(choice)]?.value;
	};
}

/**
 * Opens the viewer, and answers how it was left (`back`: Backspace on its first node, to the
 * picker); where `custom()` is not available (RPC), falls back to select + editor (`closed`).
 */
async function view(ctx: ExtensionCommandContext, service: HistoryService, id: string, highlight?: string): Promise<ViewerExit> {
	const load = (nodeId: string, offset: number, childrenOffset: number) => service.read({ id: nodeId, offset, childrenOffset });
	const first = await load(id, 0, 0);
	// `undefined`: an RPC `custom()`, which returns at once.
	const exit = await ctx.ui.custom<ViewerExit>((tui, theme, _keybindings, done) => {
		return new HistoryViewer(first, {
			load,
			rows: () => tui.terminal.rows,
			theme,
			done,
			back: "list",
			redraw: () => tui.requestRender(),
			markdown: markdownThemeFor(theme),
			...(highlight !== undefined ? { highlight } : {}),
		});
	});
	if (exit !== undefined) return exit;
	await viewWithDialogs(ctx, service, first);
	return "closed";
}

/** The viewer as dialogs: the body in an editor (whatever is typed there is discarded), then a choice of where to go. */
async function viewWithDialogs(ctx: ExtensionCommandContext, service: HistoryService, first: ReadResult): Promise<void> {
	const trail: ReadResult[] = [first];
	for (let steps = 0; steps < 200 && trail.length > 0; steps++) {
		const node = trail[trail.length - 1] as ReadResult;
		await ctx.ui.editor(`pbot history — ${refKind(node)} (read-only: edits are discarded)`, printable(readText(node)));
		const links = [...node.parents.map((r) => ({ r, dir: "↑" })), ...node.children.map((r) => ({ r, dir: "↓" }))];
		const options = [
			...links.map(({ r, dir }, i) => `${i + 1}. ${dir} ${refKind(r)} ${span(r.startedAt, r.endedAt)} ${printable(r.preview)}`),
			...(trail.length > 1 ? ["← back"] : []),
			"close",
		];
		const choice = await ctx.ui.select("Open a parent or child", options);
		if (choice === undefined || choice === "close") return;
		if (choice === "← back") {
			trail.pop();
			continue;
		}
		const link = links[options.indexOf(choice)];
		if (link) trail.push(await service.read({ id: link.r.id }));
	}
}

/**
 * Pi's Markdown theme where Pi's interactive theme is set up; elsewhere (a headless host) the same
 * structure with only bold from the component's theme.
 */
function markdownThemeFor(theme: ViewerTheme): MarkdownTheme {
	try {
		const md = getMarkdownTheme();
		md.heading(""); // throws when Pi's theme is not initialised
		return md;
	} catch {
		const same = (text: string) => text;
		return {
			heading: (text) => theme.bold(text),
			bold: (text) => theme.bold(text),
			...{ link: same, linkUrl: same, code: same, codeBlock: same, codeBlockBorder: same, quote: same, quoteBorder: same, hr: same, listBullet: same },
			...{ italic: same, strikethrough: same, underline: same },
		};
	}
}

function say(ctx: ExtensionCommandContext, message: string, level: "info" | "warning" | "error"): void {
	if (ctx.hasUI) ctx.ui.notify(message, level);
	else print(message);
}

/**
 * Print mode has no UI: results go to stdout itself, so `pi -p '/pbot history x' > file` captures
 * them; shown, never obeyed (a terminal, often). Pi's print mode keeps stdout for its answer by
 * replacing `process.stdout.write` with a redirect to stderr; the stream's own `write` (from its
 * prototype, what Pi itself prints the answer with) still reaches stdout.
 */
function print(text: string): void {
	const stdout = process.stdout;
	const taken = Object.hasOwn(stdout, "write");
	const write = taken ? (Object.getPrototypeOf(stdout) as { write: typeof stdout.write }).write : stdout.write;
	write.call(stdout, `${printable(text)}\n`);
}
