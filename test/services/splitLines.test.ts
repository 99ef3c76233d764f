import { describe, expect, it } from "vitest";
import { splitLines } from "../../src/services/history/ingest/splitLines.ts";
import { run } from "../helpers/entries.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe("splitLines", () => {
	it("emits complete lines per chunk with their line numbers and end offsets", async () => {
		const out = await run([enc("a\nbb\n")], splitLines());
		expect(out).toHaveLength(1);
		expect(out[0]?.map((l) => [l.line, dec(l.bytes), l.end, l.terminated])).toEqual([
			[1, "a", 2, true],
			[2, "bb", 5, true],
		]);
	});

	it("holds a line without its newline until the rest arrives", async () => {
		const out = await run([enc('{"a":'), enc('1}\n{"b"'), enc(":2}\n")], splitLines());
		expect(out.map((batch) => batch.map((l) => dec(l.bytes)))).toEqual([[], ['{"a":1}'], ['{"b":2}']]);
		expect(out[2]?.[0]?.line).toBe(2);
	});

	it("splits a multi-byte character across chunks without damaging it", async () => {
		const bytes = enc("中文🎉\n");
		const out = await run([bytes.subarray(0, 2), bytes.subarray(2, 5), bytes.subarray(5)], splitLines());
		expect(out.flat().map((l) => dec(l.bytes))).toEqual(["中文🎉"]);
	});

	it("flushes a torn tail as unterminated when the source completes", async () => {
		const out = await run([enc("x\ny")], splitLines());
		expect(out.flat().map((l) => [dec(l.bytes), l.terminated])).toEqual([
			["x", true],
			["y", false],
		]);
	});

	it("skips blank lines but keeps counting them", async () => {
		const out = await run([enc("a\n\n \r\nb\n")], splitLines());
		expect(out.flat().map((l) => [l.line, dec(l.bytes)])).toEqual([
			[1, "a"],
			[4, "b"],
		]);
	});

	it("continues numbering and offsets from a checkpoint", async () => {
		const out = await run([enc("c\n")], splitLines({ firstLine: 10, startOffset: 100 }));
		expect(out.flat().map((l) => [l.line, l.end])).toEqual([[10, 102]]);
	});
});

describe("splitLines regressions", () => {
	// Found by the hostile-input fuzz test: the held part of a line was joined to every new chunk,
	// so a long line was copied once per chunk (a 50 MB line read 64 KB at a time took 20 s).
	it("joins a long line read in many small chunks once (quadratic copy of a held line)", async () => {
		const size = 16 * 1024 * 1024;
		const bytes = new Uint8Array(size + 2).fill(0x61);
		bytes[size] = 0x0a;
		bytes[size + 1] = 0x62;
		const chunks: Uint8Array[] = [];
		for (let i = 0; i < bytes.length; i += 16 * 1024) chunks.push(bytes.subarray(i, i + 16 * 1024));
		const started = performance.now();
		const out = (await run(chunks, splitLines())).flat();
		expect(performance.now() - started).toBeLessThan(3_000);
		expect(out.map((l) => [l.line, l.bytes.length, l.end, l.terminated])).toEqual([
			[1, size, size + 1, true],
			[2, 1, size + 2, false],
		]);
	});
});
