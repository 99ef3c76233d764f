import { Key, Markdown, type MarkdownTheme, matchesKey, truncateToWidth, wrapTextWithAnsi, type Component } from "@mariozechner/pi-tui";
import { highlightMatches } from "./highlight.ts";
import type { NodeRef, ReadResult } from "../../../services/history/query/types.ts";
import { printable } from "../../../services/history/query/printable.ts";

/** The colours the viewer uses; Pi's `Theme` fits (methods, so its narrower colour type is accepted). */
export interface ViewerTheme {
	fg(color: "accent" | "muted" | "dim" | "warning" | "success" | "borderMuted", text: string): string;
	bold(text: string): string;
	inverse(text: string): string;
}

/** Reads a node page: `offset` pages the body, `childrenOffset` the children. */
export type ReadPage = (id: string, offset: number, childrenOffset: number) => Promise<ReadResult>;

export interface ViewerOptions {
	readonly load: ReadPage;
	/** Terminal rows, read at every render (the terminal may be resized). */
	readonly rows: () => number;
	readonly theme: ViewerTheme;
	/** Close the viewer. */
	readonly done: () => void;
	/** Ask the TUI to render again (after a page arrives). */
	readonly redraw: () => void;
	/** Reports a failed read to the person; the viewer stays open. */
	readonly onError?: (message: string) => void;
	/** Renders bodies as Markdown (headings, lists, code) with this theme; plain wrapped text without. */
	readonly markdown?: MarkdownTheme;
	/** The search that led here: its matches are shown in reverse video in every body. */
	readonly highlight?: string;
}

/** One opened node: what has been loaded of its body and children so far. */
interface Page {
	readonly first: ReadResult;
	body: string;
	nextOffset: number | null;
	children: NodeRef[];
	nextChildrenOffset: number | null;
	/** First visible line of the body. */
	scroll: number;
	/** Selected link: index into parents followed by children. */
	selected: number;
	/** The body's lines as last rendered, for this width and this much body (a render per key is not re-parsed). */
	rendered?: { readonly width: number; readonly length: number; readonly lines: string[] };
}

/** The keys, most needed first: on a narrow terminal the line is cut at its end, and "q close" must stay. */
const FOOTER = "q close · Enter open · Backspace back · Tab/Shift+Tab choose · ↑↓ PgUp PgDn Home End scroll";
/** Terminal rows left to Pi around the viewer. */
const RESERVED_ROWS = 8;
/** Lines kept for the parents/children panel at most. */
const LINKS_MAX = 10;

/**
 * A read-only viewer of one history node: its body (scrollable, loaded page by page as the person
 * scrolls), then its parents and children (children loaded page by page as the selection moves
 * down). Enter opens the selected parent or child, Backspace goes back, q or Esc closes. It keeps
 * nothing the person types: there is no editing and nothing is ever written.
 */
export class HistoryViewer implements Component {
	private readonly stack: Page[] = [];
	private loading = false;
	private width = 80;
	private message: string | undefined;

	constructor(
		first: ReadResult,
		private readonly options: ViewerOptions,
	) {
		this.stack.push(pageOf(first));
	}

	/** The node on screen. */
	get current(): ReadResult {
		return this.page.first;
	}

	/** How many nodes deep the person has gone (1 = the first node). */
	get depth(): number {
		return this.stack.length;
	}

	private get page(): Page {
		return this.stack[this.stack.length - 1] as Page;
	}

	private links(): { ref: NodeRef; role: "parent" | "child" }[] {
		const p = this.page;
		return [...p.first.parents.map((ref) => ({ ref, role: "parent" as const })), ...p.children.map((ref) => ({ ref, role: "child" as const }))];
	}

	invalidate(): void {}

	handleInput(data: string): void {
		const p = this.page;
		const bodyRows = this.bodyRows();
		const bodyLines = this.bodyLines().length;
		const maxScroll = Math.max(0, bodyLines - bodyRows);
		const links = this.links();
		if (matchesKey(data, Key.escape) || matchesKey(data, Key.ctrl("c")) || data === "q" || data === "Q") {
			this.options.done();
			return;
		}
		if (matchesKey(data, Key.down)) p.scroll++;
		else if (matchesKey(data, Key.up)) p.scroll--;
		else if (matchesKey(data, Key.pageDown)) p.scroll += Math.max(1, bodyRows - 1);
		else if (matchesKey(data, Key.pageUp)) p.scroll -= Math.max(1, bodyRows - 1);
		else if (matchesKey(data, Key.home)) p.scroll = 0;
		else if (matchesKey(data, Key.end)) p.scroll = Number.MAX_SAFE_INTEGER;
		else if (matchesKey(data, Key.tab)) p.selected = links.length === 0 ? 0 : (p.selected + 1) % links.length;
		else if (matchesKey(data, Key.shift("tab"))) p.selected = links.length === 0 ? 0 : (p.selected - 1 + links.length) % links.length;
		else if (matchesKey(data, Key.enter)) {
			const link = links[p.selected];
			if (link) void this.open(link.ref.id);
			return;
		} else if (matchesKey(data, Key.backspace)) {
			if (this.stack.length > 1) this.stack.pop();
			this.message = undefined;
		} else return; // every other key is ignored: nothing typed here goes anywhere
		p.scroll = Math.max(0, Math.min(p.scroll, maxScroll));
		// Near the end of what is loaded: fetch more of the body, or more children.
		if (p.nextOffset !== null && p.scroll + bodyRows * 2 >= bodyLines) void this.loadMoreBody(p);
		if (p.nextChildrenOffset !== null && p.selected >= p.first.parents.length + p.children.length - 1) void this.loadMoreChildren(p);
		this.options.redraw();
	}

	render(width: number): string[] {
		this.width = Math.max(20, width);
		const t = this.options.theme;
		const p = this.page;
		const n = p.first;
		const flags = [
			!n.ready ? t.fg("warning", "summary pending") : "",
			!n.completed ? t.fg("warning", "incomplete") : "",
			n.stale ? t.fg("warning", "stale") : "",
		].filter(Boolean);
		const kind = n.kind === "qa" ? "Q&A" : n.kind === "summary" ? `Summary L${n.level}` : "Session";
		const header = `${t.bold(kind)} ${t.fg("muted", `· ${printable(n.sessionTitle)} · ${span(n.startedAt, n.endedAt)}`)}${flags.length ? ` ${flags.join(" ")}` : ""}`;
		const lines = this.bodyLines();
		const rows = this.bodyRows();
		// As tall as its content (a short answer does not fill the screen with blank lines).
		const visible = lines.slice(p.scroll, p.scroll + rows);
		const position = `${Math.min(lines.length, p.scroll + 1)}–${Math.min(lines.length, p.scroll + rows)} of ${lines.length}${p.nextOffset !== null ? "+" : ""} lines${this.loading ? " · loading…" : ""}`;
		const out = [
			header,
			t.fg("borderMuted", "─".repeat(this.width)),
			...visible,
			t.fg("dim", position),
			...this.linkLines(),
			t.fg("dim", this.message ?? FOOTER),
		];
		return out.map((line) => truncateToWidth(line, this.width));
	}

	private bodyLines(): string[] {
		const p = this.page;
		if (p.body === "") return [p.first.ready ? "(empty)" : "(this summary has not been generated yet; its children are readable below)"];
		if (p.rendered?.width === this.width && p.rendered.length === p.body.length) return p.rendered.lines;
		// Shown, never obeyed: an escape sequence in a question cannot clear or retitle Pi's screen.
		// (Made printable before the marks go in: the marks are the only escapes in the text.)
		let text = printable(p.body);
		if (this.options.highlight) text = highlightMatches(text, this.options.highlight, (match) => this.options.theme.inverse(match));
		const lines = this.options.markdown
			? new Markdown(text, 0, 0, this.options.markdown).render(this.width)
			: text.split("\n").flatMap((line) => (line === "" ? [""] : wrapTextWithAnsi(line, this.width)));
		p.rendered = { width: this.width, length: p.body.length, lines };
		return lines;
	}

	private bodyRows(): number {
		// Leave Pi's own lines (chat edge, status, footer) on screen; then header, rule, position
		// line, links panel and key help take their share.
		const height = Math.max(12, this.options.rows() - RESERVED_ROWS);
		return Math.max(3, height - 4 - this.linkPanelHeight());
	}

	private linkPanelHeight(): number {
		const p = this.page;
		return Math.min(LINKS_MAX, p.first.parents.length + p.children.length + 2);
	}

	private linkLines(): string[] {
		const t = this.options.theme;
		const p = this.page;
		const links = this.links();
		const head = `Parents ${p.first.parents.length} · Children ${p.first.totalChildren}${p.nextChildrenOffset !== null ? ` (${p.children.length} loaded)` : ""}`;
		const rows = this.linkPanelHeight() - 1;
		const first = Math.max(0, Math.min(p.selected - Math.floor(rows / 2), links.length - rows));
		const lines = links.slice(first, first + rows).map(({ ref, role }, i) => {
			const index = first + i;
			const label = `${role === "parent" ? "↑" : "↓"} ${refKind(ref)} ${span(ref.startedAt, ref.endedAt)}  ${printable(ref.preview)}`;
			return index === p.selected ? t.inverse(label) : label;
		});
		if (links.length === 0) lines.push(t.fg("dim", "(no parents or children)"));
		return [t.fg("accent", head), ...lines];
	}

	private async open(id: string): Promise<void> {
		await this.withLoading(async () => {
			const result = await this.options.load(id, 0, 0);
			this.stack.push(pageOf(result));
		});
	}

	private async loadMoreBody(p: Page): Promise<void> {
		if (this.loading || p.nextOffset === null) return;
		await this.withLoading(async () => {
			const more = await this.options.load(p.first.id, p.nextOffset as number, 0);
			p.body += more.body;
			p.nextOffset = more.nextOffset;
		});
	}

	private async loadMoreChildren(p: Page): Promise<void> {
		if (this.loading || p.nextChildrenOffset === null) return;
		await this.withLoading(async () => {
			const more = await this.options.load(p.first.id, 0, p.nextChildrenOffset as number);
			p.children.push(...more.children);
			p.nextChildrenOffset = more.nextChildrenOffset;
		});
	}

	private async withLoading(work: () => Promise<void>): Promise<void> {
		this.loading = true;
		this.options.redraw();
		try {
			await work();
			this.message = undefined;
		} catch (err) {
			this.message = `could not read: ${(err as Error).message}`;
			this.options.onError?.(this.message);
		} finally {
			this.loading = false;
			this.options.redraw();
		}
	}
}

function pageOf(first: ReadResult): Page {
	return {
		first,
		body: first.body,
		nextOffset: first.nextOffset,
		children: [...first.children],
		nextChildrenOffset: first.nextChildrenOffset,
		scroll: 0,
		selected: 0,
	};
}

export function refKind(ref: { kind: string; level: number | null }): string {
	return ref.kind === "qa" ? "Q&A" : ref.kind === "summary" ? `L${ref.level}` : "session";
}

/** A compact time range: the date once, then the times. */
export function span(startIso: string, endIso: string): string {
	const a = startIso.slice(0, 16).replace("T", " ");
	const b = endIso.slice(0, 16).replace("T", " ");
	if (a === b) return a;
	return a.slice(0, 10) === b.slice(0, 10) ? `${a}–${b.slice(11)}` : `${a} – ${b}`;
}
