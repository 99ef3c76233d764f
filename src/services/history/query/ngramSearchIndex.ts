/**
 * The n-gram (trigram) search index: answers a search without looking at every document, and
 * gives exactly the scan's answer (a test compares them on Pi's files and generated sessions).
 *
 * - Every indexed document (a Q&A original, or a summary once it is ready) has a number; its
 *   folded text is stored once, as UTF-8, in a `FoldedArena`, and each distinct trigram of it
 *   (three UTF-16 units of the folded text) lists the number in `TrigramPostings`. What ranking
 *   and filters need (level, start and end times, session, whether it may be a fork's copy) is
 *   kept per number in typed arrays, so a hit costs a few array reads, not an object.
 * - A needle made only of word characters (`a–z 0–9 _`, three or more): the union of the word
 *   lists (`TokenPostings`) of the words that contain it — exact, and no document's bytes are read.
 *   This is what keeps an identifier cheap and a common word (found in a third of a million
 *   documents) one pass of its lists through a bitmap.
 * - Any other needle of three units or more: candidates from whichever source promises fewest —
 *   its rarest trigram's list; the words that contain one of its word runs (an identifier among
 *   punctuation); the junction postings (`JunctionPostings`) between two of its words separated by
 *   whitespace (a phrase of common words: `the user`) — then narrowed by the trigram lists worth
 *   decoding (a list is walked only when it would save more checks than it costs) and checked
 *   against their folded bytes, one by one when they are few, in one forward pass when they are
 *   many. A needle of exactly three units needs no check: its one trigram is the needle.
 * - Ranking walks the result from the newest number down with a heap of the page's hits; a
 *   result kept as a bitmap is counted 32 documents at a time where none can reach the page
 *   (`DocumentTable`).
 * - A shorter needle: one pass over the arena (a native `indexOf` over contiguous bytes).
 * - A needle that is not well-formed UTF-16, or holds U+FFFD: not answered (`undefined`); the
 *   search scans the strings instead (see `FoldedArena` for why).
 *
 * The index follows the view: before answering it brings itself up to date with the archive state
 * it is asked about, re-indexing only sessions whose archive object changed (immer gives a changed
 * archive a new object and keeps unchanged documents' objects), and within those only the
 * documents whose object changed. Replaced documents are forgotten (their slots are cleared); when
 * forgotten bytes outweigh live ones the index is rebuilt. It holds no text of its own but the
 * arena: snippets and offsets are computed from the originals, for the page of hits only.
 */
import type { SessionArchive } from "../archive.ts";
import type { QueryView } from "../queryView.ts";
import type { QaNode } from "../types.ts";
import { foldText, originalRange, type FoldedText } from "./fold.ts";
import { FoldedArena } from "./foldedArena.ts";
import { ancestorCopies } from "./forkDuplicates.ts";
import { intersects } from "./params.ts";
import { isQa, searchableText, type SearchDocument, type SearchFilter, type SearchIndex } from "./searchIndex.ts";
import { compareIds } from "./sessions.ts";
import { timeMs } from "./text.ts";
import { DocumentTable } from "./documentTable.ts";
import { fromBits, unionOf, type DocumentBits } from "./documentSets.ts";
import { JunctionPostings, junctionsOf } from "./junctionPostings.ts";
import { isTokenNeedle, TokenPostings } from "./tokenPostings.ts";
import { TrigramPostings } from "./trigramPostings.ts";

/** Stop intersecting lists once this few candidates remain: checking them is cheaper. */
const FEW_CANDIDATES = 16;
/** A rarest trigram list this short is the candidates, without looking at other sources. */
const FEW_ENOUGH = 256;
/** Word runs of a folded needle long enough to be in the word lists. */
const WORD_RUNS = /[a-z0-9_]{3,}/g;
/** Rough costs (ns) of decoding one posting of a list and of checking one candidate's bytes. */
const DECODE_NS = 3;
const CHECK_NS = 500;
/** Rebuild when forgotten arena bytes exceed both this and the live bytes. */
const REBUILD_MIN_DEAD_BYTES = 16 << 20;

interface IndexedSession {
	readonly archive: SessionArchive;
	readonly index: number;
	readonly docs: number[];
}

/** Statistics for the bench and for a person wondering where the memory went. */
export interface NgramIndexStats {
	readonly documents: number;
	readonly trigrams: number;
	readonly tokens: number;
	/** Junction buckets in use (`junctionPostings.ts`). */
	readonly junctions: number;
	readonly postingBytes: number;
	readonly arenaBytes: number;
	readonly memoryBytes: number;
}

export interface NgramSearchIndex extends SearchIndex {
	stats(): NgramIndexStats;
}

export interface NgramIndexOptions {
	/** Answer word needles from the word lists (default); off, they take the trigram path (tests compare both). */
	readonly words?: boolean;
	/** Use the junctions between words for phrases (default); off, phrases take the trigram path alone. */
	readonly junctions?: boolean;
	/** A rarest trigram of at most this many documents is taken without looking at other sources (tests lower it to 0). */
	readonly fewEnough?: number;
}

/**
 * Whether intersecting candidates with a list of `frequency` documents (out of `size`) is cheaper
 * than checking the candidates it would remove (as many as the list leaves out, if independent).
 */
function worthIntersecting(frequency: number, candidates: number, size: number): boolean {
	return frequency * DECODE_NS < candidates * CHECK_NS * (1 - frequency / Math.max(1, size));
}

export function ngramSearchIndex(options: NgramIndexOptions = {}): NgramSearchIndex {
	const useWords = options.words ?? true;
	const useJunctions = options.junctions ?? true;
	const fewEnough = options.fewEnough ?? FEW_ENOUGH;
	let postings = new TrigramPostings();
	let tokens = new TokenPostings();
	let junctions = new JunctionPostings();
	let arena = new FoldedArena();
	let table = new DocumentTable();
	let docs: (SearchDocument | undefined)[] = [];
	let live = 0;
	let liveBytes = 0;
	let deadBytes = 0;
	const sessions = new Map<string, IndexedSession>();
	let sessionCount = 0;
	let syncedWith: QueryView["state"] | undefined;
	const isLive = (doc: number) => docs[doc] !== undefined;

	const addDocument = (doc: SearchDocument, session: number, forked: boolean): number => {
		const num = docs.length;
		docs.push(doc);
		live++;
		table.set(num, doc, session, forked);
		const { folded } = foldText(searchableText(doc));
		arena.add(num, folded);
		liveBytes += arena.sizeOf(num);
		postings.addText(folded, num);
		tokens.addDocument(folded, num);
		if (useJunctions) junctions.addDocument(folded, num);
		return num;
	};
	const removeDocument = (num: number) => {
		if (docs[num] === undefined) return;
		docs[num] = undefined;
		live--;
		const bytes = arena.sizeOf(num);
		arena.remove(num);
		table.forget(num);
		liveBytes -= bytes;
		deadBytes += bytes;
	};
	const documentsOf = (archive: SessionArchive): SearchDocument[] => {
		const out: SearchDocument[] = [];
		for (const qa of Object.values(archive.nodes)) out.push(qa);
		for (const s of Object.values(archive.summaries)) if (s.status === "ready") out.push(s);
		return out;
	};
	const stillIn = (archive: SessionArchive, doc: SearchDocument) => (isQa(doc) ? archive.nodes[doc.id] === doc : archive.summaries[doc.id] === doc && doc.status === "ready");

	const rebuild = () => {
		postings = new TrigramPostings();
		tokens = new TokenPostings();
		junctions = new JunctionPostings();
		arena = new FoldedArena();
		table = new DocumentTable();
		docs = [];
		live = 0;
		liveBytes = 0;
		deadBytes = 0;
		sessions.clear();
		syncedWith = undefined;
	};

	const sync = (view: QueryView) => {
		if (syncedWith === view.state) return;
		if (deadBytes > REBUILD_MIN_DEAD_BYTES && deadBytes > liveBytes) rebuild();
		const current = view.state.sessions;
		for (const [id, indexed] of sessions) {
			if (current[id] === undefined) {
				for (const num of indexed.docs) removeDocument(num);
				sessions.delete(id);
			}
		}
		for (const [id, archive] of Object.entries(current)) {
			const indexed = sessions.get(id);
			if (indexed?.archive === archive) continue;
			const forked = archive.session.parentSessionId !== undefined;
			const kept: number[] = [];
			const keptDocs = new Set<SearchDocument>();
			for (const num of indexed?.docs ?? []) {
				const doc = docs[num];
				// A kept document's facts are rewritten: the session may have become a fork's (its header read later).
				if (doc !== undefined && stillIn(archive, doc)) {
					kept.push(num);
					keptDocs.add(doc);
					table.setFork(num, forked && isQa(doc));
				} else removeDocument(num);
			}
			const index = indexed?.index ?? sessionCount++;
			for (const doc of documentsOf(archive)) if (!keptDocs.has(doc)) kept.push(addDocument(doc, index, forked));
			sessions.set(id, { archive, index, docs: kept });
		}
		syncedWith = view.state;
	};

	/** Document numbers whose folded text contains the needle (well-formed, no U+FFFD), ascending. */
	const find = (needle: string): Int32Array | number[] | DocumentBits => {
		const bytes = Buffer.from(needle, "utf8");
		if (needle.length < 3) return arena.scan(bytes, isLive);
		// A word needle lies within one word: the union of the lists of the words that contain it is
		// exactly its answer, with no document read.
		if (useWords && isTokenNeedle(needle)) return unionOf(tokens.lists, tokens.listsContaining(needle).lists, docs.length);
		const trigrams: number[] = [];
		for (let i = 0; i + 2 < needle.length; i++) {
			const id = postings.find(needle.charCodeAt(i), needle.charCodeAt(i + 1), needle.charCodeAt(i + 2));
			if (id < 0) return [];
			if (!trigrams.includes(id)) trigrams.push(id);
		}
		const lists = postings.lists;
		trigrams.sort((a, b) => lists.frequency(a) - lists.frequency(b));
		if (needle.length === 3) return lists.documents(trigrams[0] as number);
		// Three sources of candidates, each holding every hit: the rarest trigram's list, the words that
		// contain one of the needle's word runs (`SessionCache` in `SessionCache): Map`), and the
		// junctions between its words. The one promising fewest documents is taken.
		// (A rarest trigram of few documents is taken at once: looking further would cost more.)
		const rarest = lists.frequency(trigrams[0] as number);
		const fromWords = useWords && rarest > fewEnough ? wordRunCandidates(needle, rarest) : undefined;
		let candidates = (useJunctions && rarest > fewEnough ? junctionCandidates(needle, fromWords?.length ?? rarest) : undefined) ?? fromWords;
		let k = 0;
		if (candidates === undefined) {
			candidates = lists.documents(trigrams[0] as number);
			k = 1;
		}
		for (; k < trigrams.length && candidates.length > FEW_CANDIDATES; k++) {
			const id = trigrams[k] as number;
			if (worthIntersecting(lists.frequency(id), candidates.length, docs.length)) candidates = lists.intersect(id, candidates);
		}
		// One forward pass pays off only when most documents between the first and last candidate are
		// candidates; otherwise each is checked within its own bytes.
		const span = candidates.length === 0 ? 1 : (candidates[candidates.length - 1] as number) - (candidates[0] as number) + 1;
		return arena.verify(candidates, bytes, candidates.length > span / 2);
	};

	/**
	 * Candidates from the words that contain the needle's rarest word run (a maximal run of word
	 * characters, three or more): every occurrence of the needle puts the run inside one word of the
	 * text. `undefined` when no run promises fewer than `rarest` documents.
	 */
	const wordRunCandidates = (needle: string, rarest: number): Int32Array | undefined => {
		let best: number[] | undefined;
		let bestPostings = rarest;
		// Fewest words first (by the tokens' own trigrams), until one is rare enough to stop looking.
		const runs = (needle.match(WORD_RUNS) ?? []).map((run) => ({ run, words: tokens.tokensAtMost(run) })).sort((a, b) => a.words - b.words);
		for (const { run } of runs) {
			if (bestPostings <= fewEnough) break;
			const { lists: ids, postings: n } = tokens.listsContaining(run);
			if (n < bestPostings) {
				best = ids;
				bestPostings = n;
			}
		}
		if (best === undefined) return undefined;
		const union = unionOf(tokens.lists, best, docs.length);
		return union instanceof Int32Array ? union : fromBits(union.bits);
	};

	/**
	 * Candidates from the junctions between the needle's words (`junctionPostings.ts`), when they
	 * promise fewer than `bound` documents (the best other source): the union of the lists of the
	 * rarest junction, intersected with the lists of the others that have one list. `undefined`:
	 * no junction to use, or none rarer.
	 */
	const junctionCandidates = (needle: string, bound: number): Int32Array | undefined => {
		const sets: { ids: number[]; postings: number }[] = [];
		for (const j of junctionsOf(needle)) {
			const ids = junctions.listsOf(j);
			if (ids === undefined) continue;
			let n = 0;
			for (const id of ids) n += junctions.lists.frequency(id);
			sets.push({ ids, postings: n });
		}
		if (sets.length === 0) return undefined;
		sets.sort((a, b) => a.postings - b.postings);
		const best = sets[0] as (typeof sets)[number];
		if (best.postings >= bound) return undefined;
		const union = unionOf(junctions.lists, best.ids, docs.length);
		let candidates = union instanceof Int32Array ? union : fromBits(union.bits);
		for (let k = 1; k < sets.length && candidates.length > FEW_CANDIDATES; k++) {
			const set = sets[k] as (typeof sets)[number];
			if (set.ids.length === 1) candidates = junctions.lists.intersect(set.ids[0] as number, candidates);
		}
		return candidates;
	};

	// Folded forms of the few documents whose offsets are asked for (the page of hits).
	const recent = new Map<SearchDocument, FoldedText>();
	const foldedOf = (doc: SearchDocument): FoldedText => {
		let f = recent.get(doc);
		if (!f) {
			f = foldText(searchableText(doc));
			if (recent.size >= 256) recent.delete(recent.keys().next().value as SearchDocument);
			recent.set(doc, f);
		}
		return f;
	};

	return {
		ranked(view, needle, filter, needed) {
			if (!isWellFormed(needle) || needle.includes("\ufffd")) return undefined;
			sync(view);
			return rank(view, find(needle), filter, needed);
		},
		textOf: searchableText,
		indexOf: (doc, needle) => foldedOf(doc).folded.indexOf(needle),
		originalRange: (doc, start, length) => originalRange(searchableText(doc), foldedOf(doc), start, length),
		stats: () => ({
			documents: live,
			trigrams: postings.size,
			tokens: tokens.size,
			junctions: junctions.lists.size,
			postingBytes: postings.bytes + tokens.lists.bytes + junctions.lists.bytes,
			arenaBytes: arena.bytes,
			memoryBytes: postings.memoryBytes() + tokens.memoryBytes() + junctions.memoryBytes() + arena.memoryBytes() + table.bytes() + docs.length * 8,
		}),
	};

	/**
	 * Filters, drops fork copies and ranks, as `searchHistory` does: level, newest end first, id.
	 * A heap keeps the best `needed`; the rest are only counted.
	 */
	function rank(view: QueryView, found: Int32Array | number[] | DocumentBits, filter: SearchFilter, needed: number): { top: SearchDocument[]; total: number } {
		const { level, endMs, startMs, session, fork, wordLevel, wordEnd, wordSpecial } = table;
		const only = filter.sessionId === undefined ? -1 : (sessions.get(filter.sessionId)?.index ?? -2);
		const window = filter.window;
		const filtered = window.fromMs !== undefined || window.toMs !== undefined;
		const passes = (doc: QaNode) => (filter.sessionId === undefined || doc.sessionId === filter.sessionId) && (!filtered || intersects(window, timeMs(doc.startedAt), timeMs(doc.endedAt)));
		// Worse first: the heap's root is the worst of the best kept so far.
		const worse = (a: number, b: number) => (level[a] as number) - (level[b] as number) || (endMs[b] as number) - (endMs[a] as number) || compareIds((docs[a] as SearchDocument).id, (docs[b] as SearchDocument).id);
		const heap: number[] = [];
		let total = 0;
		const consider = (num: number) => {
			if (docs[num] === undefined) return; // forgotten (a trigram list still names it)
			if (only !== -1 && session[num] !== only) return;
			if (filtered && !intersects(window, startMs[num] as number, endMs[num] as number)) return;
			// A copy of a Q&A that an ancestor session holds with the same content is shown once, there.
			// The copy has the same text, so it is a hit exactly when it passes the filters.
			if (fork[num] === 1 && ancestorCopies(view, docs[num] as QaNode).some(passes)) return;
			total++;
			if (needed === 0) return;
			if (heap.length < needed) heapPush(heap, num, worse);
			else if (worse(num, heap[0] as number) < 0) heapReplaceRoot(heap, num, worse);
		};
		// Newest documents have the highest numbers: walking down, the best come first and the
		// rest mostly fail one comparison with the heap's worst.
		if (!("bits" in found)) {
			for (let k = found.length - 1; k >= 0; k--) consider(found[k] as number);
		} else {
			const bits = found.bits;
			// Without filters, a word with no document to look at alone is only counted once the heap
			// is full and its best possible document ranks below the heap's worst.
			const countable = only === -1 && !filtered;
			for (let w = bits.length - 1; w >= 0; w--) {
				let word = bits[w] as number;
				if (word === 0) continue;
				if (countable && wordSpecial[w] === 0 && (needed === 0 || (heap.length === needed && below(w, heap[0] as number)))) {
					total += popcount(word);
					continue;
				}
				while (word !== 0) {
					const bit = 31 - Math.clz32(word);
					word ^= 1 << bit;
					consider((w << 5) | bit);
				}
			}
		}
		heap.sort(worse);
		return { top: heap.map((n) => docs[n] as SearchDocument), total };

		/** Whether every document of word `w` ranks below document `root` (level first, then end). */
		function below(w: number, root: number): boolean {
			const best = wordLevel[w] as number;
			const rootLevel = level[root] as number;
			return best > rootLevel || (best === rootLevel && (wordEnd[w] as number) < (endMs[root] as number));
		}
	}
}

function popcount(x: number): number {
	x -= (x >>> 1) & 0x55555555;
	x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
	x = (x + (x >>> 4)) & 0x0f0f0f0f;
	return Math.imul(x, 0x01010101) >>> 24;
}

// A max-heap by `worse` (the root is the worst element kept).
function heapPush(heap: number[], value: number, worse: (a: number, b: number) => number): void {
	heap.push(value);
	let i = heap.length - 1;
	while (i > 0) {
		const parent = (i - 1) >> 1;
		if (worse(heap[parent] as number, heap[i] as number) >= 0) break;
		[heap[parent], heap[i]] = [heap[i] as number, heap[parent] as number];
		i = parent;
	}
}

function heapReplaceRoot(heap: number[], value: number, worse: (a: number, b: number) => number): void {
	heap[0] = value;
	let i = 0;
	for (;;) {
		const l = 2 * i + 1;
		const r = l + 1;
		let top = i;
		if (l < heap.length && worse(heap[l] as number, heap[top] as number) > 0) top = l;
		if (r < heap.length && worse(heap[r] as number, heap[top] as number) > 0) top = r;
		if (top === i) return;
		[heap[top], heap[i]] = [heap[i] as number, heap[top] as number];
		i = top;
	}
}

/** No lone surrogate (Node 20 has no `String.prototype.isWellFormed`). */
function isWellFormed(text: string): boolean {
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c >= 0xd800 && c <= 0xdbff) {
			const next = text.charCodeAt(i + 1);
			if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
			i++;
		} else if (c >= 0xdc00 && c <= 0xdfff) return false;
	}
	return true;
}
