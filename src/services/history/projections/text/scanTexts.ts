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
import { insertSorted, topForPage } from "../../query/paging.ts";
import { compareIds } from "../../query/sessions.ts";
import type { SessionText } from "./sessionText.ts";
import { COPY_KEY_BYTES, hasLoneSurrogate, LONE_SURROGATE } from "./sessionTextFormat.ts";

/**
 * A hit before paging, with what ranking, fork de-duplication and showing it need, copied out of
 * its session's rows as it is found (the rows may be in a buffer reused for the next session).
 * `head` is the session as the projection holds it after the scan: what reading the hit's meta and
 * original text is checked against (`TextProjection.slice`), and its header (the session's title);
 * it may hold the header line alone.
 */
export interface ScanHit {
	readonly head: SessionText;
	readonly row: number;
	readonly id: string;
	readonly level: number;
	readonly endMs: number;
	readonly completed: boolean;
	readonly stale: boolean;
	readonly metaRange: [number, number];
	readonly originalRange: [number, number];
	/** A summary: whether a Q&A it covers matched too. */
	readonly verified?: boolean;
	/** A Q&A of a session with a parent: its fork-copy key (`SessionText.copyKey`). */
	readonly copyKey?: string;
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

const byRank = (a: ScanHit, b: ScanHit) => a.level - b.level || b.endMs - a.endMs || compareIds(a.id, b.id);

/**
 * Whether a folded needle's byte matches must be checked against the original text. UTF-8 writes a
 * lone surrogate as U+FFFD, and a needle's lone surrogate can match half of a pair in UTF-16, which
 * UTF-8 never splits: for such needles the scan finds candidates (a superset), and the caller keeps
 * those the original text confirms.
 */
export function needsTextCheck(needle: string): boolean {
	return needle.includes("\ufffd") || hasLoneSurrogate(needle);
}

/** The row of a session's latest Q&A (by start) when it is not completed, else -1. */
function latestOpenQa(text: SessionText): number {
	let latest = -1;
	for (let row = 0; row < text.docs; row++) {
		if (text.level(row) === 0 && (latest < 0 || text.startMs(row) >= text.startMs(latest))) latest = row;
	}
	return latest >= 0 && !text.completed(latest) ? latest : -1;
}

/**
 * Collects the hits of one search over sessions handed in one at a time. With `keep` (the end of
 * the page asked for), memory stays flat however many documents match: of a session with no
 * parent (whose hits are never fork copies) only hits that may still rank within the first `keep`
 * are kept, the others counted; every Q&A hit's fork-copy key is kept as 8 bytes (a session
 * forked from it may hold copies). Hits of sessions with a parent are all kept, to be checked
 * against their fork chain at the end. Without `keep`, every hit is kept (`candidates`).
 */
export class ScanCollector {
	/** The bytes scanned for: the needle, or with lone surrogates, its longest well-formed piece (none: every document). */
	private readonly needle: Buffer | undefined;
	/** The needle has a lone surrogate: only documents holding surrogates (in UTF-16) can match. */
	private readonly surrogates: boolean;
	private readonly filtered: boolean;
	/** Hits of sessions with no parent: with `keep`, the best `keep` so far in rank order; else all of them, unordered. */
	private best: ScanHit[] = [];
	/** Hits of sessions with a parent (possible fork copies), all of them. */
	private forked: ScanHit[] = [];
	/** Hits of sessions with no parent that were only counted (`keep`). */
	private counted = 0;
	/** Per session with Q&A hits: their copy keys, 8 bytes each (what a fork's copies are checked against). */
	private readonly hitKeys = new Map<string, Buffer>();
	/** Each session's parent (from every session seen, filtered out or not): fork chains. */
	private readonly parents = new Map<string, string>();
	private readonly sessions = new Set<string>();
	/** Hits left out as the Q&A in progress (`ScanFilter.inProgressOf`). */
	leftOut = 0;

	constructor(
		needle: string,
		private readonly filter: ScanFilter,
		private readonly keep?: number,
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
	 * Scans one session's projection (`text`: read at least to the end of its text, or searched as
	 * it was read; it may be in a buffer reused for the next session) and keeps its hits against
	 * `head`, the session as held after the scan.
	 */
	add(text: SessionText, head: SessionText = text): void {
		// (Nothing below `docsOf` changes what a rollback restores: most sessions end there.)
		const docs = this.docsOf(text);
		if (docs === undefined) return;
		// Taken back if a damaged row or meta is found part-way (`SessionTextError`): the projection
		// then makes the session again from its archive and visits it once more. (With `keep`, `best`
		// holds at most a page; without, hits are only pushed.)
		const before = {
			best: this.keep === undefined ? this.best.length : this.best.slice(),
			forked: this.forked.length,
			counted: this.counted,
			leftOut: this.leftOut,
		};
		try {
			this.addSession(text, head, docs);
		} catch (err) {
			if (typeof before.best === "number") this.best.length = before.best;
			else this.best = before.best;
			this.forked.length = before.forked;
			this.counted = before.counted;
			this.leftOut = before.leftOut;
			throw err;
		}
	}

	/** The session noted (for the fork chains), and the documents of it that match; `undefined` when none does or it is filtered out. */
	private docsOf(text: SessionText): readonly number[] | undefined {
		if (!this.note(text.sessionId, text.header.session.parentSessionId)) return undefined;
		const matched = this.needle ? text.matching(this.needle) : undefined;
		const docs = this.surrogates ? text.withSurrogates(matched) : (matched ?? []);
		return docs.length === 0 ? undefined : docs;
	}

	private addSession(text: SessionText, head: SessionText, docs: readonly number[]): void {
		const parent = text.header.session.parentSessionId;
		const { window } = this.filter;
		const inProgress = this.filter.inProgressOf === text.sessionId ? latestOpenQa(text) : -1;
		const forked = parent !== undefined;
		let matchedQa: Set<number> | undefined;
		const keys: number[] = [];
		// Last row first: a session's Q&A are in the order they were asked, and the newest rank first
		// (see `rank`; the sessions themselves come newest first).
		for (let i = docs.length - 1; i >= 0; i--) {
			const doc = docs[i] as number;
			if (doc === inProgress) {
				this.leftOut++;
				continue;
			}
			const endMs = text.endMs(doc);
			if (this.filtered && !intersects(window, text.startMs(doc), endMs)) continue;
			const level = text.level(doc);
			if (level === 0) keys.push(doc);
			let verified: boolean | undefined;
			if (level > 0) {
				// `verified`: one of the Q&A the summary covers matched too (whatever the filters).
				matchedQa ??= new Set(docs.filter((d) => text.level(d) === 0));
				verified = text.meta(doc).coveredRows.some((r) => matchedQa?.has(r));
			}
			if (forked) this.forked.push(this.hitOf(text, head, doc, level, endMs, verified, true));
			else if (this.keep === undefined) this.best.push(this.hitOf(text, head, doc, level, endMs, verified, false));
			else this.rank(text, head, doc, level, endMs, verified);
		}
		if (keys.length > 0) {
			const bytes = Buffer.allocUnsafe(keys.length * COPY_KEY_BYTES);
			let at = 0;
			for (const doc of keys) {
				const key = text.copyKeyBytes(doc);
				if (key) at += key.copy(bytes, at);
			}
			this.hitKeys.set(text.sessionId, bytes.subarray(0, at));
		}
	}

	/** A hit of a session with no parent, with `keep`: kept when it ranks within the first `keep` so far, else counted. */
	private rank(text: SessionText, head: SessionText, doc: number, level: number, endMs: number, verified: boolean | undefined): void {
		const keep = this.keep as number;
		const best = this.best;
		if (best.length >= keep) {
			const last = best[best.length - 1];
			// Ranked after the last kept (compared without making the hit, unless it ties on time).
			const order = last === undefined ? -1 : level - last.level || last.endMs - endMs;
			if (last === undefined || order > 0 || (order === 0 && compareIds(text.id(doc), last.id) >= 0)) {
				this.counted++;
				return;
			}
		}
		insertSorted(best, this.hitOf(text, head, doc, level, endMs, verified, false), byRank);
		if (best.length > keep) {
			best.pop();
			this.counted++;
		}
	}

	private hitOf(text: SessionText, head: SessionText, doc: number, level: number, endMs: number, verified: boolean | undefined, forked: boolean): ScanHit {
		const copyKey = forked && level === 0 ? text.copyKey(doc) : undefined;
		return {
			head,
			row: doc,
			id: text.id(doc),
			level,
			endMs,
			completed: text.completed(doc),
			stale: text.stale(doc),
			metaRange: text.metaRange(doc),
			originalRange: text.originalRange(doc),
			...(verified !== undefined ? { verified } : {}),
			...(copyKey !== undefined ? { copyKey } : {}),
		};
	}

	/** How many hits are held now (with `keep`: at most `keep`, plus the hits of sessions with a parent). */
	get held(): number {
		return this.best.length + this.forked.length;
	}

	/** Every hit so far (for a caller that must check candidates against the original text); only without `keep`. */
	get candidates(): readonly ScanHit[] {
		if (this.keep !== undefined) throw new Error("a search that keeps only a page of hits has no list of candidates");
		return [...this.best, ...this.forked];
	}

	/** Keeps only the hits `keep` accepts; only without `keep` (whose hits' heads hold their rows). */
	retain(keep: (hit: ScanHit) => boolean): void {
		if (this.keep !== undefined) throw new Error("a search that keeps only a page of hits cannot drop candidates");
		this.best = this.best.filter(keep);
		this.forked = this.forked.filter(keep);
		const keys = new Map<string, Buffer[]>();
		for (const h of [...this.best, ...this.forked]) {
			const key = h.level === 0 ? h.head.copyKeyBytes(h.row) : undefined;
			if (!key) continue;
			const held = keys.get(h.head.sessionId);
			if (held) held.push(key);
			else keys.set(h.head.sessionId, [key]);
		}
		this.hitKeys.clear();
		for (const [sessionId, held] of keys) this.hitKeys.set(sessionId, Buffer.concat(held));
	}

	/**
	 * The hits without fork copies, the first `needed` in rank order (level, newest end first, id),
	 * and how many there are. A Q&A hit is a copy when a session up its fork chain holds a Q&A
	 * with the same entries and parts that is itself a hit (`forkDuplicates.ts`, the same rule).
	 */
	finish(needed: number): { readonly ranked: readonly ScanHit[]; readonly total: number } {
		const forked = this.parents.size === 0 ? this.forked : this.withoutCopies(this.forked);
		const kept = this.best.length + forked.length;
		const ranked = this.keep === undefined || forked.length > 0 ? topForPage([...this.best, ...forked], needed, byRank) : this.best;
		return { ranked: ranked.slice(0, needed), total: kept + this.counted };
	}

	private withoutCopies(hits: readonly ScanHit[]): ScanHit[] {
		/** Per session up a fork chain: its Q&A hits' copy keys, as strings (made when first asked for). */
		const keySets = new Map<string, Set<string>>();
		const keysOf = (sessionId: string): Set<string> => {
			let keys = keySets.get(sessionId);
			if (!keys) {
				keys = new Set();
				const bytes = this.hitKeys.get(sessionId);
				if (bytes) for (let at = 0; at < bytes.length; at += COPY_KEY_BYTES) keys.add(bytes.toString("latin1", at, at + COPY_KEY_BYTES));
				keySets.set(sessionId, keys);
			}
			return keys;
		};
		const isCopy = (h: ScanHit): boolean => {
			const key = h.copyKey;
			if (key === undefined) return false;
			const seen = new Set<string>([h.head.sessionId]);
			for (
				let parent = this.parents.get(h.head.sessionId);
				parent !== undefined && !seen.has(parent) && this.sessions.has(parent);
				parent = this.parents.get(parent)
			) {
				seen.add(parent);
				if (keysOf(parent).has(key)) return true;
			}
			return false;
		};
		return hits.filter((h) => !isCopy(h));
	}
}
