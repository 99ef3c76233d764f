/**
 * Search as a full-text scan of the text projection: each session's folded text is scanned with
 * one native `indexOf` per hit, hits are filtered, fork copies dropped, and the page ranked. Pure:
 * the caller hands in the sessions' projections one at a time (a CLI streams them from disk and
 * lets each go; Pi keeps them in memory) and later builds the shown hits from their archives.
 *
 * The answer is the plain scan's (`searchHistory` over archives): same hits, order and total. A
 * regression test compares them.
 */
import { intersects, type TimeWindow } from "../../query/params.ts";
import { topForPage } from "../../query/paging.ts";
import { compareIds } from "../../query/sessions.ts";
import type { SessionText } from "./sessionText.ts";

/**
 * A hit before paging: its session's projection head (rows and ids, held after the scan), its row,
 * and what ranking needs at once. The id is read from the head when ranking needs it.
 */
export interface ScanHit {
	readonly head: SessionText;
	readonly row: number;
	readonly level: number;
	readonly endMs: number;
	/** A summary: whether a Q&A it covers matched too. */
	readonly verified?: boolean;
}

export interface ScanFilter {
	readonly sessionId?: string;
	readonly window: TimeWindow;
	/**
	 * A session whose Q&A in progress (its latest Q&A, when not completed) is left out: inside Pi,
	 * the question being answered right now is not a hit for the search the model makes to answer it.
	 */
	readonly inProgressOf?: string;
}

const byRank = (a: ScanHit, b: ScanHit) => a.level - b.level || b.endMs - a.endMs || compareIds(a.head.id(a.row), b.head.id(b.row));

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Whether a folded needle's byte matches must be checked against the original text. UTF-8 writes a
 * lone surrogate as U+FFFD, and a needle's lone surrogate can match half of a pair in UTF-16, which
 * UTF-8 never splits: for such needles the scan finds candidates (a superset), and the caller keeps
 * those the original text confirms.
 */
export function needsTextCheck(needle: string): boolean {
	LONE_SURROGATE.lastIndex = 0;
	return needle.includes("\ufffd") || LONE_SURROGATE.test(needle);
}

/** The row of a session's latest Q&A (by start) when it is not completed, else -1. */
function latestOpenQa(text: SessionText): number {
	let latest = -1;
	for (let row = 0; row < text.docs; row++) {
		if (text.level(row) === 0 && (latest < 0 || text.startMs(row) >= text.startMs(latest))) latest = row;
	}
	return latest >= 0 && !text.completed(latest) ? latest : -1;
}

/** Collects the hits of one search over sessions handed in one at a time. */
export class ScanCollector {
	/** The bytes scanned for: the needle, or with lone surrogates, its longest well-formed piece (none: every document). */
	private readonly needle: Buffer | undefined;
	/** The needle has a lone surrogate: only documents holding surrogates (in UTF-16) can match. */
	private readonly surrogates: boolean;
	private readonly filtered: boolean;
	private hits: ScanHit[] = [];
	/** Each session's parent (from every session seen, filtered out or not): fork chains. */
	private readonly parents = new Map<string, string>();
	private readonly sessions = new Set<string>();
	/** Hits left out as the Q&A in progress (`ScanFilter.inProgressOf`). */
	leftOut = 0;

	constructor(
		needle: string,
		private readonly filter: ScanFilter,
	) {
		const pieces = needle.split(LONE_SURROGATE);
		this.surrogates = pieces.length > 1;
		const longest = pieces.reduce((a, b) => (b.length > a.length ? b : a), "");
		this.needle = longest === "" ? undefined : Buffer.from(longest, "utf8");
		this.filtered = filter.window.fromMs !== undefined || filter.window.toMs !== undefined;
	}

	/**
	 * The bytes a scan can search for as it reads each session's text (`TextProjection.scan`), or
	 * `undefined` when every document's text must be at hand (a needle with a lone surrogate, or none).
	 */
	get streamNeedle(): Buffer | undefined {
		return this.surrogates ? undefined : this.needle;
	}

	/**
	 * Notes a session (its header is enough) for the fork chains; `wants` says whether its text is
	 * needed at all (the session filter).
	 */
	note(sessionId: string, parentSessionId: string | undefined): boolean {
		this.sessions.add(sessionId);
		if (parentSessionId !== undefined) this.parents.set(sessionId, parentSessionId);
		return this.filter.sessionId === undefined || this.filter.sessionId === sessionId;
	}

	/**
	 * Scans one session's projection (`text`: read at least to the end of its text; it may be a
	 * buffer reused for the next session) and keeps its hits against `head`, the session's rows as
	 * held after the scan.
	 */
	add(text: SessionText, head: SessionText = text): void {
		if (!this.note(text.sessionId, text.header.session.parentSessionId)) return;
		const { window } = this.filter;
		const matched = this.needle ? text.matching(this.needle) : undefined;
		const docs = this.surrogates ? text.withSurrogates(matched) : (matched ?? []);
		const inProgress = this.filter.inProgressOf === text.sessionId && docs.length > 0 ? latestOpenQa(text) : -1;
		let matchedQa: Set<number> | undefined;
		for (const doc of docs) {
			if (doc === inProgress) {
				this.leftOut++;
				continue;
			}
			const endMs = text.endMs(doc);
			if (this.filtered && !intersects(window, text.startMs(doc), endMs)) continue;
			const level = text.level(doc);
			if (level === 0) {
				this.hits.push({ head, row: doc, level, endMs });
				continue;
			}
			// `verified`: one of the Q&A the summary covers matched too (whatever the filters).
			matchedQa ??= new Set(docs.filter((d) => text.level(d) === 0));
			const verified = text.meta(doc).coveredRows.some((r) => matchedQa?.has(r));
			this.hits.push({ head, row: doc, level, endMs, verified });
		}
	}

	/** The hits so far (for a caller that must check candidates against the original text). */
	get candidates(): readonly ScanHit[] {
		return this.hits;
	}

	/** Keeps only the hits `keep` accepts. */
	retain(keep: (hit: ScanHit) => boolean): void {
		this.hits = this.hits.filter(keep);
	}

	/**
	 * The hits without fork copies, the first `needed` in rank order (level, newest end first, id),
	 * and how many there are. A Q&A hit is a copy when a session up its fork chain holds a Q&A
	 * with the same entries and parts that is itself a hit (`forkDuplicates.ts`, the same rule).
	 */
	finish(needed: number): { readonly ranked: readonly ScanHit[]; readonly total: number } {
		const kept = this.parents.size === 0 ? this.hits : this.withoutCopies();
		return { ranked: topForPage(kept, needed, byRank).slice(0, needed), total: kept.length };
	}

	private withoutCopies(): ScanHit[] {
		const hitKeys = new Map<string, Set<string>>();
		const keyOf = (h: ScanHit) => h.head.copyKey(h.row);
		for (const h of this.hits) {
			const key = keyOf(h);
			if (key === undefined) continue;
			let keys = hitKeys.get(h.head.sessionId);
			if (!keys) hitKeys.set(h.head.sessionId, (keys = new Set()));
			keys.add(key);
		}
		const isCopy = (h: ScanHit): boolean => {
			if (!this.parents.has(h.head.sessionId)) return false;
			const key = keyOf(h);
			if (key === undefined) return false;
			const seen = new Set<string>([h.head.sessionId]);
			for (
				let parent = this.parents.get(h.head.sessionId);
				parent !== undefined && !seen.has(parent) && this.sessions.has(parent);
				parent = this.parents.get(parent)
			) {
				seen.add(parent);
				if (hitKeys.get(parent)?.has(key)) return true;
			}
			return false;
		};
		return this.hits.filter((h) => !isCopy(h));
	}
}
