/**
 * The raw-bytes fast path of `parseLines` must give exactly what the full parse gives, for every
 * line it takes, and must take the lines that carry the bytes (tool results, tool-call messages).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { generateSession } from "../../bench/generator/session.ts";
import { parseLine, parseLineInFull } from "../../src/services/history/ingest/parseLines.ts";
import { scanMessageLine } from "../../src/services/history/ingest/scanMessageLine.ts";
import { searchableBuffer, stringEndOf } from "../../src/services/history/model/byteSearch.ts";
import { FIXTURES_DIR } from "../helpers/fixtures.ts";
import { prng } from "../durability/fuzz/mutations.ts";

const encoder = new TextEncoder();
const source = (bytes: Uint8Array, terminated = true) => ({ line: 3, bytes, end: 0, terminated });

function linesOf(bytes: Uint8Array): Uint8Array[] {
	const out: Uint8Array[] = [];
	let start = 0;
	for (let i = 0; i < bytes.length; i++) {
		if (bytes[i] === 0x0a) {
			out.push(bytes.subarray(start, i));
			start = i + 1;
		}
	}
	if (start < bytes.length) out.push(bytes.subarray(start));
	return out;
}

/**
 * Where a session file is read in an ingest: a searchable buffer, whose lines' strings the fast path
 * scans with the byte search module (`string_end`), not four bytes at a time.
 */
const region = searchableBuffer(1 << 20) as Buffer;
let shift = 0;

/** The same line in the searchable buffer, at an offset that moves (the module's blocks are not aligned to the line). */
function inModuleMemory(bytes: Uint8Array): Uint8Array {
	shift = (shift + 7) % 16;
	const view = region.subarray(shift, shift + bytes.length);
	view.set(bytes);
	return view;
}

/** The fast path either declines or agrees with the full parse, exactly, wherever the line lies. */
function expectAgreement(bytes: Uint8Array): boolean {
	const fast = scanMessageLine(bytes, 3);
	if (bytes.length + 16 <= region.length) {
		const moved = inModuleMemory(bytes);
		expect(stringEndOf(moved)).toBeDefined();
		expect(scanMessageLine(moved, 3)).toEqual(fast);
	}
	if (!fast) return false;
	const full = parseLineInFull(source(bytes));
	expect({ kind: "entry", entry: fast }, new TextDecoder().decode(bytes.subarray(0, 200))).toEqual(full);
	return true;
}

const fixtureLines = readdirSync(FIXTURES_DIR)
	.filter((n) => n.endsWith(".jsonl"))
	.flatMap((n) => linesOf(readFileSync(join(FIXTURES_DIR, n))));

function generatedLines(seed: number, profile: "agent" | "chat" = "agent"): Uint8Array[] {
	const lines: Uint8Array[] = [];
	generateSession(
		createRng(seed),
		{ profile, targetBytes: 400_000, targetQa: profile === "chat" ? 40 : undefined, startMs: Date.UTC(2025, 0, 1) } as never,
		(line) => lines.push(encoder.encode(line)),
	);
	return lines;
}

describe("scanMessageLine (the fast path of parseLines)", () => {
	it("agrees with the full parse on every line of Pi's own files", () => {
		let taken = 0;
		for (const line of fixtureLines) if (expectAgreement(line)) taken++;
		expect(taken).toBeGreaterThan(100);
	});

	it("agrees with the full parse on generated sessions and takes the lines that carry the bytes", () => {
		let takenBytes = 0;
		let toolBytes = 0;
		for (const seed of [1, 2, 3]) {
			for (const line of [...generatedLines(seed), ...generatedLines(seed, "chat")]) {
				const taken = expectAgreement(line);
				const text = new TextDecoder().decode(line.subarray(0, 200));
				if (text.includes('"role":"toolResult"') || text.includes('"role":"assistant"')) {
					toolBytes += line.length;
					if (taken) takenBytes += line.length;
				}
			}
		}
		expect(takenBytes / toolBytes).toBeGreaterThan(0.99);
	});

	it("declines or agrees on randomly damaged lines (byte flips, cuts, inserted escapes, control bytes, invalid UTF-8)", () => {
		const random = prng(7);
		const int = (n: number) => Math.floor(random() * n);
		const pool = [...fixtureLines.filter((l) => l.length > 0 && l[0] === 0x7b), ...generatedLines(9).filter((l) => l.length < 20_000)];
		const inserts = [
			[0x5c],
			[0x22],
			[0x00],
			[0x1f],
			[0x0d],
			[0xff],
			[0xc3, 0x28],
			[0xed, 0xa0, 0x80],
			[0x7d],
			[0x5d],
			[0x2c],
			[0x3a],
			[0x20],
			[0x5c, 0x75, 0x30],
		];
		let declined = 0;
		for (let k = 0; k < 6_000; k++) {
			const line = pool[int(pool.length)] as Uint8Array;
			let bytes: Uint8Array;
			const how = int(4);
			if (how === 0) {
				bytes = line.slice();
				for (let f = 0; f < 1 + int(3); f++) {
					const at = int(bytes.length);
					bytes[at] = (bytes[at] as number) ^ (1 + int(255));
				}
			} else if (how === 1) bytes = line.slice(0, int(line.length));
			else if (how === 2) {
				const at = int(line.length);
				bytes = Uint8Array.from([...line.subarray(0, at), ...(inserts[int(inserts.length)] as number[]), ...line.subarray(at)]);
			} else {
				const at = int(line.length);
				bytes = Uint8Array.from([...line.subarray(0, at), ...line.subarray(at + 1 + int(4))]);
			}
			if (!expectAgreement(bytes)) declined++;
			// And the whole parser never errors or disagrees with itself on what it rejects.
			const parsed = parseLine(source(bytes));
			const full = parseLineInFull(source(bytes));
			expect(parsed.kind).toBe(full.kind);
		}
		expect(declined).toBeGreaterThan(0);
	});

	it("declines what it cannot be sure of, and accepts exactly what JSON.parse accepts", () => {
		const base = (message: string) => `{"type":"message","id":"a1","parentId":"p0","timestamp":"2026-01-01T00:00:00.000Z","message":${message}}`;
		const cases: string[] = [
			base('{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1767225600000}'),
			base(
				'{"role":"assistant","content":[{"type":"thinking","thinking":"x","thinkingSignature":"AA=="},{"type":"text","text":"a"},{"type":"toolCall","id":"t","name":"bash","arguments":{"command":"ls","n":[1,2.5e-3,-0,true,false,null,{}]}}],"stopReason":"toolUse","timestamp":1}',
			),
			base(
				'{"role":"assistant","content":[{"type":"text","text":"one"},{"type":"text","text":"two \\u00e9 \\ud83d \\n"},{"type":"image","data":"AA"},{"text":"typeless"},"str",[1],{"type":"text","text":5}],"stopReason":"stop","errorMessage":"e\\"","timestamp":1e400}',
			),
			base('{"role":"user","content":"plain \\t string","timestamp":-1.5}'),
			base('{"role":"user","content":{"type":"text"},"timestamp":"x"}'),
			base('{"role":"user","content":[ {"type" : "text" , "text" : "spaced" } ] , "timestamp" : 2 }'),
			base('{"role":"hookMessage","content":"c"}'),
			base('{"role":"","content":[]}'),
			// Duplicated or escaped watched keys: declined (JSON.parse keeps the last one).
			base('{"role":"user","content":"a","content":"b"}'),
			base('{"role":"user","role":"assistant","content":"a"}'),
			base('{"role":"user","\\u0063ontent":"b"}'),
			base('{"role":"user","content":[{"type":"text","type":"image","text":"x"}]}'),
			base('{"role":"user","content":[{"type":"te\\u0078t","text":"x"}]}'),
			// Not JSON: declined (and rejected by the full parse).
			base('{"role":"user","content":"raw \u0001 control"}'),
			base('{"role":"user","content":"bad \\x escape"}'),
			base('{"role":"user","content":"short \\u12"}'),
			base('{"role":"user","content":[1,]}'),
			base('{"role":"user","content":01}'),
			base('{"role":"user","content":1.}'),
			base('{"role":"user","content":tru}'),
			base('{"role":"user","content":"x"'),
			base('{"role":"user","content":"x"}}'),
			base('{"role":"user","content":"x",}'),
			`${base('{"role":"user","content":"x"}')} `,
			'{"type":"message","id":"","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}',
			'{"type":"message","id":"a\\"b","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}',
		];
		let taken = 0;
		for (const text of cases) {
			const bytes = encoder.encode(text);
			if (expectAgreement(bytes)) taken++;
			expect(parseLine(source(bytes))).toEqual(parseLineInFull(source(bytes)));
		}
		expect(taken).toBe(8);
	});

	it("agrees with the full parse on texts without escapes (ASCII, CJK, emoji, invalid UTF-8) and on any stop reason", () => {
		const line = (text: Uint8Array, stop = "stop") =>
			Buffer.concat([
				encoder.encode(
					'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"',
				),
				text,
				encoder.encode(`"}],"stopReason":"${stop}","timestamp":1}}`),
			]);
		const texts = [
			encoder.encode("plain ascii, no escape at all"),
			encoder.encode("日本語のテキスト, 中文, 한국어 and 🚀 emoji"),
			Uint8Array.from([0x61, 0xc3, 0x28, 0x62, 0xe2, 0x82, 0x61, 0xf0, 0x9f, 0x98]), // invalid sequences
			encoder.encode(""),
		];
		for (const text of texts) for (const stop of ["stop", "toolUse", "stopped early", "stop\u0021"]) expect(expectAgreement(line(text, stop))).toBe(true);
	});

	it("gives a torn last line the same answer as the full parse (held, or an entry when it is complete)", () => {
		const line = generatedLines(4).find((l) => l.length > 2_000) as Uint8Array;
		expect(parseLine(source(line, false))).toEqual(parseLineInFull(source(line, false)));
		expect(parseLine(source(line.subarray(0, line.length - 1), false))).toEqual(parseLineInFull(source(line.subarray(0, line.length - 1), false)));
	});
});
