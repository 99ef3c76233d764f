/**
 * The floor of a search over this design, as a whole process: what any scan of the text projection
 * must do and nothing else. It lists the session folder and `stat`s every session file (what tells
 * a query whether anything changed), reads the pack's index, reads each session's projection (its
 * pack entry, newest first, or its own file in the text folder) up to the end of its folded text,
 * 512 KB at a time through one buffer, its header line parsed to learn where that is, and counts the
 * needle's occurrences. No freshness verdict, no ranking, no snippets, no output but a count; the
 * needle comes folded by the runner.
 *
 * It searches as pbot does: given the byte search's WebAssembly module (`byteSearch.ts`, its
 * base64 as the fourth argument: the runner imports it, which this CommonJS file cannot), the
 * buffer is made in the module's memory and searched with its `find`, a needle of one byte with
 * `Buffer.indexOf` (as `indexOfBytes` does). Without it, `Buffer.indexOf` searches everything:
 * over the bench's 1 GB history that took 20–65 ms a query where the module takes 4–12, and the
 * floor said to be a third slower than rg was not one.
 *
 * CommonJS (`.cts`): an ES module entry would make Node set up its module loader first, which a
 * floor should not pay. The bench times it against `rg` as it times `pbot-history search`, so the
 * table says how much of a search process is Node's start and the unavoidable I/O, and how much is
 * pbot's own.
 *
 *   node dist/bench/bench/floorScan.cjs <session folder> <text folder> <folded needle> [module base64 [pair]]
 *
 * `pair`: the needle's two offsets the module tests first (`pairToTest`, "3,7"), as pbot picks them;
 * without it, its first and last bytes.
 */
import fs = require("node:fs");
import path = require("node:path");

const { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } = fs;
const { join } = path;

const [sessionDir, textDir, folded, moduleBase64, pairArg] = process.argv.slice(2);
if (sessionDir === undefined || textDir === undefined || folded === undefined) {
	process.stderr.write("usage: floorScan <session folder> <text folder> <folded needle> [byte search module, base64]\n");
	process.exit(2);
}
const needle = Buffer.from(folded, "utf8");

let stamps = 0;
for (const name of readdirSync(sessionDir)) {
	if (!name.endsWith(".jsonl")) continue;
	const s = statSync(join(sessionDir, name));
	stamps += s.size + s.mtimeMs + s.ino + s.ctimeMs;
}

const CHUNK = 512 * 1024;
/** The module's memory: the needle in its first page, then the chunk (`searchableBuffer`). */
const NEEDLE_ROOM = 64 * 1024;
/** The module's `find(hay, length, needle, k, oa, ob)`: the offset of the first match in `[hay, hay + length)`, or -1. */
type Find = (hay: number, length: number, needle: number, k: number, oa: number, ob: number) => number;
/** What is used of the global `WebAssembly` (its types come with the DOM's, which the project does not load). */
interface WasmApi {
	readonly Module: new (bytes: Uint8Array) => object;
	readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
	readonly Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
let find: Find | undefined;
const [oa = 0, ob = needle.length - 1] = pairArg ? pairArg.split(",").map(Number) : [];
let chunk: Buffer;
if (wasm && moduleBase64 !== undefined && needle.length >= 2 && needle.length <= NEEDLE_ROOM) {
	const memory = new wasm.Memory({ initial: (NEEDLE_ROOM + CHUNK) / NEEDLE_ROOM });
	const instance = new wasm.Instance(new wasm.Module(Buffer.from(moduleBase64, "base64")), { pbot: { memory } });
	find = instance.exports.find as Find;
	new Uint8Array(memory.buffer).set(needle, 0);
	chunk = Buffer.from(memory.buffer, NEEDLE_ROOM, CHUNK);
} else chunk = Buffer.allocUnsafe(CHUNK);
/** Bytes read first: a header line and then some (`storedTexts.ts` reads as much). */
const HEAD_READ = 8 * 1024;
let hits = 0;
/** Occurrences of the needle in `chunk[from, to)`. */
const count = (from: number, to: number): void => {
	const k = needle.length;
	if (find) {
		for (let at = from; at + k <= to; ) {
			const found = find(NEEDLE_ROOM + at, to - at, 0, k, oa, ob);
			if (found < 0) return;
			hits++;
			at += found + k;
		}
		return;
	}
	const view = chunk.subarray(from, to);
	for (let i = view.indexOf(needle); i >= 0; i = view.indexOf(needle, i + k)) hits++;
};

/** Counts the needle in the folded text of the projection at `[offset, offset + length)` of `fd`. */
function scan(fd: number, offset: number, length: number): void {
	// The header line says where the folded text starts and ends (`sessionTextFormat.ts`): read
	// first, then what follows it up to the text's end (the original text after it is not read).
	let first = readSync(fd, chunk, 0, Math.min(HEAD_READ, length), offset);
	const newline = chunk.indexOf(0x0a);
	if (newline < 0 || newline >= first) return;
	const h = JSON.parse(chunk.toString("utf8", 0, newline)) as { docs: number; idBytes: number; metaBytes: number; textBytes: number };
	const textAt = newline + 1 + 64 * h.docs + h.idBytes + h.metaBytes;
	const textEnd = textAt + h.textBytes;
	if (textEnd > first && textEnd <= chunk.length) first += readSync(fd, chunk, first, textEnd - first, offset + first);
	if (textEnd <= first) {
		count(textAt, textEnd);
		return;
	}
	// Longer than a chunk: read on from the text's start, each chunk overlapping the last by the
	// needle's length less one (no match fits in the overlap alone, so none is counted twice).
	for (let at = textAt; ; ) {
		const got = readSync(fd, chunk, 0, Math.min(chunk.length, textEnd - at), offset + at);
		count(0, got);
		if (at + got >= textEnd || got === 0) return;
		at += Math.max(1, got - needle.length + 1);
	}
}

// Sessions written since the pack: a file each.
const own = new Set<string>();
for (const name of readdirSync(textDir)) {
	if (!name.endsWith(".text")) continue;
	own.add(name.slice(0, -".text".length));
	const fd = openSync(join(textDir, name), "r");
	scan(fd, 0, fstatSync(fd).size);
	closeSync(fd);
}

/** The pack's footer: `PBTPACK1`, then the index's offset as a u48 LE (`textPack.ts`). */
const FOOTER = 16;
let pack: number | undefined;
try {
	pack = openSync(join(textDir, "pack.cache"), "r");
} catch {
	// no pack: every session has a file
}
if (pack !== undefined) {
	const size = fstatSync(pack).size;
	const footer = Buffer.alloc(FOOTER);
	readSync(pack, footer, 0, FOOTER, size - FOOTER);
	const indexAt = footer.readUIntLE(8, 6);
	const index = Buffer.allocUnsafe(size - FOOTER - indexAt);
	readSync(pack, index, 0, index.length, indexAt);
	const entries = (JSON.parse(index.toString("utf8")) as { entries: [string, string, number, number][] }).entries;
	for (let e = entries.length - 1; e >= 0; e--) {
		const [id, , offset, length] = entries[e] as [string, string, number, number];
		if (!own.has(id)) scan(pack, offset, length);
	}
	closeSync(pack);
}
process.stdout.write(`${JSON.stringify({ total: hits, stamps: stamps > 0 })}\n`);
