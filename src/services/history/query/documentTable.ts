/**
 * What ranking and filters need per document of the n-gram index, in typed arrays by document
 * number (a hit costs a few array reads, not an object): level, start and end times, session,
 * whether it may be a fork's copy.
 *
 * And per word of 32 document numbers (a word of a result bitmap), a bound on how good its best
 * document can be — the lowest level and the latest end among them — and whether any of them needs
 * a look of its own (forgotten, or a fork's possible copy). Ranking a result of hundreds of
 * thousands of documents then counts most words with one popcount: once the page's heap is full,
 * a word whose best document would still rank below the heap's worst holds nothing for the page.
 */
import { isQa, type SearchDocument } from "./searchIndex.ts";
import { timeMs } from "./text.ts";

export class DocumentTable {
	level = new Int32Array(1024);
	startMs = new Float64Array(1024);
	endMs = new Float64Array(1024);
	session = new Int32Array(1024);
	/** 1: a Q&A of a session forked from another (it may be a copy the search drops). */
	fork = new Uint8Array(1024);
	/** Per word of 32 numbers: the lowest level and the latest end of its documents. */
	wordLevel = new Int32Array(32).fill(0x7fffffff);
	wordEnd = new Float64Array(32).fill(-Infinity);
	/** Per word: 1 when a document of it is forgotten or may be a fork's copy (looked at one by one). */
	wordSpecial = new Uint8Array(32);

	set(num: number, doc: SearchDocument, session: number, forked: boolean): void {
		if (num >= this.level.length) this.grow(num + 1);
		const level = isQa(doc) ? 0 : doc.level;
		const end = timeMs(doc.endedAt);
		this.level[num] = level;
		this.startMs[num] = timeMs(doc.startedAt);
		this.endMs[num] = end;
		this.session[num] = session;
		const w = num >>> 5;
		if (level < (this.wordLevel[w] as number)) this.wordLevel[w] = level;
		if (end > (this.wordEnd[w] as number)) this.wordEnd[w] = end;
		this.setFork(num, forked && isQa(doc));
	}

	setFork(num: number, fork: boolean): void {
		this.fork[num] = fork ? 1 : 0;
		if (fork) this.wordSpecial[num >>> 5] = 1;
	}

	/** A document forgotten: its word is looked at one by one from now on. */
	forget(num: number): void {
		if (num < this.level.length) this.wordSpecial[num >>> 5] = 1;
	}

	private grow(min: number): void {
		const size = Math.max(min, this.level.length * 2);
		const grown = <T extends Int32Array | Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
			const b = make(size);
			b.set(a);
			return b;
		};
		this.level = grown(this.level, (n) => new Int32Array(n));
		this.startMs = grown(this.startMs, (n) => new Float64Array(n));
		this.endMs = grown(this.endMs, (n) => new Float64Array(n));
		this.session = grown(this.session, (n) => new Int32Array(n));
		this.fork = grown(this.fork, (n) => new Uint8Array(n));
		const words = (size + 31) >>> 5;
		const wordLevel = new Int32Array(words).fill(0x7fffffff);
		wordLevel.set(this.wordLevel);
		this.wordLevel = wordLevel;
		const wordEnd = new Float64Array(words).fill(-Infinity);
		wordEnd.set(this.wordEnd);
		this.wordEnd = wordEnd;
		this.wordSpecial = grown(this.wordSpecial, (n) => new Uint8Array((n + 31) >>> 5));
	}

	bytes(): number {
		return this.level.length * (4 + 8 + 8 + 4 + 1) + (this.wordLevel.length * 13);
	}
}
