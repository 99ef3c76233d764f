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

/** How the viewer was left: Backspace on the first node (`back`, see `ViewerOptions.back`), or q, Esc, Ctrl+C. */
export type ViewerExit = "back" | "closed";

export interface ViewerOptions {
	readonly load: ReadPage;
	/** Terminal rows, read at every render (the terminal may be resized). */
	readonly rows: () => number;
	readonly theme: ViewerTheme;
	/** Close the viewer: `back` for Backspace on the first node (only with `back`), `closed` for q, Esc or Ctrl+C. */
	readonly done: (how: ViewerExit) => void;
	/**
	 * What Backspace on the first node goes back to (`done("back")`), as the key hint names it: `list`
	 * (the picker the node was opened from). Without it, Backspace does nothing there.
	 */
	readonly back?: string;
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
	/** End was pressed: the body is shown to its end, loaded to its end (until another scroll key). */
	toEnd: boolean;
	/** Selected link: index into parents followed by children. */
	selected: number;
	/** The body's lines as last rendered, for this width and this much body (a render per key is not re-parsed). */
	rendered?: { readonly width: number; readonly length: number; readonly lines: string[] };
}

/** Terminal rows left to Pi around the viewer where there are rows enough. */
const RESERVED_ROWS = 8;
/** The fewest rows left to Pi: its footer under the viewer (working folder, tokens, extension statuses). */
const PI_FOOTER_ROWS = 3;
/** Rows the viewer takes, where the terminal has them, before it cuts into `RESERVED_ROWS`. */
const COMFORTABLE_ROWS = 12;
/** From this many rows on, a rule under the header. */
const RULE_FROM_ROWS = 8;
/** Lines kept for the parents/children panel at most. */
const LINKS_MAX = 10;

/**
 * A read-only viewer of one history node: its body (scrollable, loaded page by page as the person
 * scrolls; End loads it to its end), then its parents and children (children loaded page by page
 * as the selection moves down). It fits the terminal: header, position line and key line stay on
 * screen, the body keeps about half of the rows. Enter opens the selected parent or child,
 * Backspace goes back (on the first node, to where it was opened from: `ViewerOptions.back`), q or
 * Esc closes. It keeps nothing the person types: there is no editing and nothing is ever written.
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
		const bodyRows = this.layout().body;
		const bodyLines = this.bodyLines().length;
		const maxScroll = Math.max(0, bodyLines - bodyRows);
		const links = this.links();
		if (matchesKey(data, Key.escape) || matchesKey(data, Key.ctrl("c")) || data === "q" || data === "Q") {
			this.options.done("closed");
			return;
		}
		// Scrolling from the end: from the end as shown (the body may have grown since End was pressed).
		if (p.toEnd) p.scroll = maxScroll;
		const scrolls = [Key.down, Key.up, Key.pageDown, Key.pageUp, Key.home].some((key) => matchesKey(data, key));
		if (scrolls) p.toEnd = false;
		if (matchesKey(data, Key.down)) p.scroll++;
		else if (matchesKey(data, Key.up)) p.scroll--;
		else if (matchesKey(data, Key.pageDown)) p.scroll += Math.max(1, bodyRows - 1);
		else if (matchesKey(data, Key.pageUp)) p.scroll -= Math.max(1, bodyRows - 1);
		else if (matchesKey(data, Key.home)) p.scroll = 0;
		else if (matchesKey(data, Key.end)) {
			// The end of the body, not of what is loaded: the rest is loaded (line numbers and Markdown
			// need all that comes before), and the view stays at the end as it arrives.
			p.toEnd = true;
			p.scroll = maxScroll;
			void this.loadMoreBody(p);
		} else if (matchesKey(data, Key.tab)) p.selected = links.length === 0 ? 0 : (p.selected + 1) % links.length;
		else if (matchesKey(data, Key.shift("tab"))) p.selected = links.length === 0 ? 0 : (p.selected - 1 + links.length) % links.length;
		else if (matchesKey(data, Key.enter)) {
			const link = links[p.selected];
			if (link) void this.open(link.ref.id);
			return;
		} else if (matchesKey(data, Key.backspace)) {
			if (this.stack.length === 1) {
				// Nothing left in the trail: back to where the first node was opened from, if anywhere.
				if (this.options.back !== undefined) this.options.done("back");
				return;
			}
			this.stack.pop();
			this.message = undefined;
			this.options.redraw();
			return;
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
		const layout = this.layout();
		const rows = layout.body;
		// At the end after End; within the body when the terminal has grown or the lines have rewrapped.
		const maxScroll = Math.max(0, lines.length - rows);
		p.scroll = p.toEnd ? maxScroll : Math.min(p.scroll, maxScroll);
		// As tall as its content (a short answer does not fill the screen with blank lines).
		const visible = lines.slice(p.scroll, p.scroll + rows);
		const position = `${Math.min(lines.length, p.scroll + 1)}–${Math.min(lines.length, p.scroll + rows)} of ${lines.length}${p.nextOffset !== null ? "+" : ""} lines${this.loading ? " · loading…" : ""}`;
		const out = [
			header,
			...(layout.rule ? [t.fg("borderMuted", "─".repeat(this.width))] : []),
			...visible,
			t.fg("dim", position),
			...this.linkLines(layout.links),
			t.fg("dim", this.message ?? this.keyHint()),
		];
		return out.map((line) => truncateToWidth(line, this.width));
	}

	/** The keys, most needed first: on a narrow terminal the line is cut at its end, and "q close" must stay. */
	private keyHint(): string {
		const back = this.stack.length > 1 ? "Backspace back" : this.options.back !== undefined ? `Backspace back to ${this.options.back}` : undefined;
		return ["q close", "Enter open", back, "Tab/Shift+Tab choose", "↑↓ PgUp PgDn Home End scroll"].filter((key) => key !== undefined).join(" · ");
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

	/**
	 * The viewer's rows: Pi's own lines around it (chat edge, status, footer) stay on screen where
	 * the terminal has rows enough; on a small one only Pi's footer does, so that the header and the
	 * position line stay on screen too.
	 */
	private viewerRows(): number {
		const rows = this.options.rows();
		return Math.max(rows - RESERVED_ROWS, Math.min(COMFORTABLE_ROWS, rows - PI_FOOTER_ROWS));
	}

	/**
	 * How the viewer's rows are shared. Header, position line and key line always; the rule from
	 * `RULE_FROM_ROWS` rows; then the body keeps about half of the rows (as many as it has lines,
	 * at least one), the links panel takes what it needs of the rest (up to `LINKS_MAX`, scrolling
	 * within it), and the body has whatever is left.
	 */
	private layout(): { readonly body: number; readonly rule: boolean; readonly links: number } {
		const height = this.viewerRows();
		const rule = height >= RULE_FROM_ROWS;
		const space = Math.max(1, height - 3 - (rule ? 1 : 0));
		const kept = Math.min(this.bodyLines().length, Math.max(1, Math.floor(height / 2)));
		const links = Math.max(0, Math.min(this.linkPanelWanted(), space - kept));
		return { body: Math.max(1, space - links), rule, links };
	}

	/** The links panel's lines with rows enough: its head, then a line per link (or one saying there are none). */
	private linkPanelWanted(): number {
		const p = this.page;
		return Math.min(LINKS_MAX, 1 + Math.max(1, p.first.parents.length + p.children.length));
	}

	/** The links panel in `height` lines: its head and a window of links around the selected one; in one line, the selected link alone. */
	private linkLines(height: number): string[] {
		if (height <= 0) return [];
		const t = this.options.theme;
		const p = this.page;
		const links = this.links();
		const loaded = p.nextChildrenOffset !== null ? ` (${p.children.length} loaded)` : "";
		const head = t.fg("accent", `Parents ${p.first.parents.length} · Children ${p.first.totalChildren}${loaded}`);
		if (links.length === 0) return [head, t.fg("dim", "(no parents or children)")].slice(0, height);
		const rows = height === 1 ? 1 : height - 1;
		const first = Math.max(0, Math.min(p.selected - Math.floor(rows / 2), links.length - rows));
		const lines = links.slice(first, first + rows).map(({ ref, role }, i) => {
			const index = first + i;
			const label = `${role === "parent" ? "↑" : "↓"} ${refKind(ref)} ${span(ref.startedAt, ref.endedAt)}  ${printable(ref.preview)}`;
			return index === p.selected ? t.inverse(label) : label;
		});
		return height === 1 ? lines : [head, ...lines];
	}

	private async open(id: string): Promise<void> {
		await this.withLoading(async () => {
			const result = await this.options.load(id, 0, 0);
			this.stack.push(pageOf(result));
		});
	}

	/** The body's next page; after End, every page to its end. */
	private async loadMoreBody(p: Page): Promise<void> {
		if (this.loading || p.nextOffset === null) return;
		await this.withLoading(async () => {
			do {
				const offset = p.nextOffset as number;
				const more = await this.options.load(p.first.id, offset, 0);
				p.body += more.body;
				// An offset that does not move on would load the same page for ever.
				p.nextOffset = more.nextOffset !== null && more.nextOffset > offset ? more.nextOffset : null;
			} while (p.toEnd && p.nextOffset !== null);
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

	/** One read at a time; a failure is shown on the key line. */
	private async withLoading(work: () => Promise<void>): Promise<void> {
		this.loading = true;
		this.options.redraw();
		let done = false;
		try {
			await work();
			this.message = undefined;
			done = true;
		} catch (err) {
			this.message = `could not read: ${(err as Error).message}`;
			this.options.onError?.(this.message);
		} finally {
			this.loading = false;
			this.options.redraw();
		}
		// End pressed while another read ran: the rest of the body now.
		const p = this.page;
		if (done && p.toEnd && p.nextOffset !== null) void this.loadMoreBody(p);
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
		toEnd: false,
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
