/**
 * Finding a folded needle's bytes in a scan's buffers, with WebAssembly SIMD (`byteSearch.wat`).
 *
 * A search is a scan of ≈ 90 MB of folded text on the bench's 1 GB history, and `Buffer.indexOf`
 * was half of it: its search starts with `memchr` for the needle's first byte, which in text stops
 * every few bytes ("connection pool": at every "c"). The module tests sixteen positions at once for
 * the needle's first and last byte, and compares only where both match: over that history's text,
 * "connection pool" 31 → 12 ms, "the user" 59 → 12 ms, "searchport-zq469" 24 → 7 ms (one process,
 * the same chunks). A one-byte needle stays with `Buffer.indexOf` (`memchr` is the fastest there).
 *
 * The module searches only its own memory, so the buffers a scan reads into are made there
 * (`searchableBuffer`), and `indexOfBytes` searches in WebAssembly when the haystack is one of them,
 * with `Buffer.indexOf` otherwise (or where WebAssembly SIMD is missing). The answers are the same.
 * The ingest reads session files into such buffers too: its fast path scans each JSON string with
 * the module's `string_end` (`stringEndOf`), plain bytes sixteen at a time.
 */
import { BYTE_SEARCH_WASM } from "./byteSearchModule.ts";

const PAGE = 64 * 1024;
/** The memory's first bytes hold the needle: longer needles are searched with `Buffer.indexOf`. */
const NEEDLE_ROOM = PAGE;
/** The largest searchable buffer (the module's offsets are signed 32-bit). */
export const MAX_BUFFER = 1 << 30;

type Find = (hay: number, len: number, needle: number, k: number, oa: number, ob: number) => number;
/**
 * The module's `string_end(p, end)` (`byteSearch.wat`): from the byte after a JSON string's opening
 * quote, the address after its closing quote, or -1 when the string is not valid JSON before `end`.
 */
export type StringEnd = (p: number, end: number) => number;

/** What is used of the global `WebAssembly` (its types come with the DOM's, which this project does not load). */
interface WasmApi {
	readonly Module: new (bytes: Uint8Array) => object;
	readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
	readonly Memory: new (descriptor: { initial: number }) => WasmMemory;
}

/** A WebAssembly memory: growing it replaces `buffer` (every view of the old one is void). */
export interface WasmMemory {
	readonly buffer: ArrayBuffer;
	grow(pages: number): number;
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** A searchable buffer's module: its memory (needle room, then the buffer) and the needle it holds now. */
interface Searcher {
	readonly find: Find;
	readonly stringEnd: StringEnd;
	readonly memory: Uint8Array;
	needle?: Uint8Array;
	/** The needle's two bytes `find` tests first (`pairToTest`). */
	pair?: readonly [number, number];
}

/** Per searchable buffer's memory: its module. */
const searchers = new WeakMap<ArrayBufferLike, Searcher>();

/** The compiled module, once per process; `null` where it cannot be (no WebAssembly SIMD). */
let compiled: object | null | undefined;

function compiledModule(): object | null {
	if (compiled === undefined) {
		try {
			compiled = wasm ? new wasm.Module(Buffer.from(BYTE_SEARCH_WASM, "base64")) : null;
		} catch {
			compiled = null;
		}
	}
	return compiled;
}

/**
 * A fresh instance of the module with a memory of its own (`pages` of 64 KB to start), or
 * `undefined` where WebAssembly SIMD is missing or no memory can be had: for callers that work in
 * the memory themselves (`TextArena`).
 */
export function byteModule(pages: number): { readonly memory: WasmMemory; readonly exports: Record<string, unknown> } | undefined {
	const module = compiledModule();
	if (!module || !wasm) return undefined;
	try {
		const memory = new wasm.Memory({ initial: pages });
		return { memory, exports: new wasm.Instance(module, { pbot: { memory } }).exports };
	} catch {
		return undefined;
	}
}

/**
 * A buffer of `length` bytes that `indexOfBytes` searches in WebAssembly: a fresh module instance
 * with memory of its own. `undefined` where WebAssembly SIMD is missing or `length` is too large
 * (the caller then makes a plain buffer).
 */
export function searchableBuffer(length: number): Buffer | undefined {
	// (Each memory reserves address space of its own: where none is left, a plain buffer does.)
	const made = length <= MAX_BUFFER ? byteModule(Math.ceil((NEEDLE_ROOM + length) / PAGE)) : undefined;
	if (!made) return undefined;
	const { memory, exports } = made;
	searchers.set(memory.buffer, {
		find: exports.find as Find,
		stringEnd: exports.string_end as StringEnd,
		memory: new Uint8Array(memory.buffer),
	});
	return Buffer.from(memory.buffer, NEEDLE_ROOM, length);
}

/**
 * `haystack.indexOf(needle, from)` for a needle and a start in the haystack (`from` ≥ 0), in
 * WebAssembly when `haystack` lies in a searchable buffer. The needle is copied into the module's
 * memory when it is not the one searched for last: a scan hands in the same array every time, and
 * must not change it meanwhile.
 */
export function indexOfBytes(haystack: Buffer, needle: Uint8Array, from: number): number {
	const k = needle.length;
	const searcher = k >= 2 && k <= NEEDLE_ROOM && from >= 0 ? searchers.get(haystack.buffer) : undefined;
	if (!searcher) return haystack.indexOf(needle, from);
	if (from + k > haystack.length) return -1;
	if (searcher.needle !== needle) {
		searcher.memory.set(needle, 0);
		searcher.needle = needle;
		searcher.pair = pairToTest(needle);
	}
	const [oa, ob] = searcher.pair as readonly [number, number];
	const at = searcher.find(haystack.byteOffset + from, haystack.length - from, 0, k, oa, ob);
	return at < 0 ? -1 : from + at;
}

/**
 * The module's `string_end` for bytes that lie in a searchable buffer (addresses are
 * `bytes.byteOffset` plus an index in `bytes`), else `undefined`: what the ingest's fast path
 * scans a JSON string with.
 */
export function stringEndOf(bytes: Uint8Array): StringEnd | undefined {
	return searchers.get(bytes.buffer)?.stringEnd;
}

/**
 * The two offsets of a needle (k >= 2) whose bytes `find` tests at every position: its two rarest
 * bytes in text (`COMMONNESS`), so that few positions are candidates to compare whole. The first and
 * last bytes, which it had tested, are often common letters: over the bench's query mix this made
 * the search 40% faster (the same hits: only which positions are compared whole changes).
 */
export function pairToTest(needle: Uint8Array): readonly [number, number] {
	let a = 0;
	for (let i = 1; i < needle.length; i++) if (commonness(needle[i] as number) < commonness(needle[a] as number)) a = i;
	let b = a === 0 ? 1 : 0;
	for (let i = 0; i < needle.length; i++) if (i !== a && commonness(needle[i] as number) < commonness(needle[b] as number)) b = i;
	return a < b ? [a, b] : [b, a];
}

/**
 * How common a byte is in folded text, higher for more common: the space, then lowercase letters in
 * their order of frequency in English, then bytes of multibyte characters (continuation bytes, the
 * lead bytes of CJK), digits and the punctuation of code; any other byte is rare. A rough order is
 * all it needs to be: any pair finds the same occurrences.
 */
function commonness(byte: number): number {
	return COMMONNESS[byte] as number;
}

const COMMONNESS = (() => {
	const table = new Uint8Array(256);
	const ranked = " etaoinsrhldcumfpgwybvk.,_-/()=:;'\"0123456789xjqz";
	for (let i = 0; i < ranked.length; i++) table[ranked.charCodeAt(i)] = 250 - i * 4;
	// Multibyte characters: continuation bytes are in every one; E3–E9 lead most CJK characters.
	for (let byte = 0x80; byte <= 0xbf; byte++) table[byte] = 200;
	for (let byte = 0xe3; byte <= 0xe9; byte++) table[byte] = 120;
	table[0x0a] = 100;
	return table;
})();
