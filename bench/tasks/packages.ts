/**
 * What the chosen packages cost on the hot path, measured on the same bytes: `ndjson` and Node's
 * `readline` as line sources, RxJS around our own line source, and `ndjson.stringify` as the
 * streaming `--json` output of events. Each figure is MB/s (or events/s) over the same files.
 */
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import ndjson from "ndjson";
import { from, lastValueFrom, map } from "rxjs";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { parseLine, parseLineInFull, parseLines } from "../../src/services/history/ingest/parseLines.ts";
import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import { splitLines, type SourceLine } from "../../src/services/history/ingest/splitLines.ts";
import { folderBytes } from "./wiring.ts";

export interface PackageCosts {
	readonly bytes: number;
	/** ms per variant, over the same files. */
	readonly ms: Readonly<Record<string, number>>;
	readonly events: number;
	readonly eventMs: Readonly<Record<string, number>>;
}

const CHUNK = 1 << 20;

function chunksOf(file: string): Uint8Array[] {
	const bytes = readFileSync(file);
	const out: Uint8Array[] = [];
	for (let i = 0; i < bytes.length; i += CHUNK) out.push(bytes.subarray(i, i + CHUNK));
	return out;
}

/** Our line splitting without RxJS: the same work as `splitLines`, in a plain loop. */
function plainLines(chunks: readonly Uint8Array[], parse: (l: SourceLine) => unknown): number {
	let n = 0;
	let held: Uint8Array | undefined;
	let line = 1;
	for (const chunk of chunks) {
		let data = chunk;
		if (held) {
			data = new Uint8Array(held.length + chunk.length);
			data.set(held);
			data.set(chunk, held.length);
			held = undefined;
		}
		let start = 0;
		for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
			if (nl > start) {
				parse({ line, bytes: data.subarray(start, nl), end: nl + 1, terminated: true });
				n++;
			}
			line++;
			start = nl + 1;
		}
		if (start < data.length) held = data.slice(start);
	}
	return n;
}

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
	const s = performance.now();
	await fn();
	return performance.now() - s;
}

export async function packageCosts(dir: string, limitBytes: number): Promise<PackageCosts> {
	const { files: all } = folderBytes(dir);
	const files: string[] = [];
	let bytes = 0;
	for (const f of all) {
		if (bytes >= limitBytes) break;
		files.push(f);
		bytes += readFileSync(f).length;
	}
	const ms: Record<string, number> = {};
	// Every variant reads the files itself; the page cache is warm for all of them.
	ms.naive = await timed(() => {
		for (const f of files) {
			const text = readFileSync(f, "utf8");
			let start = 0;
			for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
				if (nl > start) JSON.parse(text.slice(start, nl));
				start = nl + 1;
			}
		}
	});
	ms.ndjson = await timed(async () => {
		for (const f of files) {
			await pipeline(createReadStream(f, { highWaterMark: CHUNK }), ndjson.parse(), new Writable({ objectMode: true, write: (_o, _e, cb) => cb() }));
		}
	});
	ms.readline = await timed(async () => {
		for (const f of files) {
			const rl = createInterface({ input: createReadStream(f, { highWaterMark: CHUNK }), crlfDelay: Infinity });
			for await (const l of rl) if (l.length > 0) JSON.parse(l);
		}
	});
	ms.rxFull = await timed(async () => {
		for (const f of files)
			await lastValueFrom(
				from(chunksOf(f)).pipe(
					splitLines(),
					map((lines: SourceLine[]) => lines.map(parseLineInFull)),
				),
				{ defaultValue: [] },
			);
	});
	ms.rxFast = await timed(async () => {
		for (const f of files) await lastValueFrom(from(chunksOf(f)).pipe(splitLines(), parseLines()), { defaultValue: [] });
	});
	ms.plainFast = await timed(() => {
		for (const f of files) plainLines(chunksOf(f), parseLine);
	});
	ms.pipeline = await timed(async () => {
		for (const f of files) await lastValueFrom(from(chunksOf(f)).pipe(sessionPipeline({ mode: "replay" })), { defaultValue: [] });
	});

	// The `--json` event stream: every event of these files, through ndjson.stringify or JSON.stringify.
	const events: HistoryEvent[] = [];
	for (const f of files.slice(0, 40)) events.push(...(await lastValueFrom(from(chunksOf(f)).pipe(sessionPipeline({ mode: "replay" })), { defaultValue: [] })));
	const eventMs: Record<string, number> = {};
	eventMs.ndjsonStringify = await timed(
		() =>
			new Promise<void>((resolve) => {
				const out = ndjson.stringify();
				let n = 0;
				out.on("data", () => {
					if (++n === events.length) resolve();
				});
				for (const e of events) out.write(e);
				if (events.length === 0) resolve();
			}),
	);
	eventMs.jsonStringify = await timed(() => {
		const lines: string[] = [];
		for (const e of events) lines.push(`${JSON.stringify(e)}\n`);
		return lines.length;
	});
	return { bytes, ms, events: events.length, eventMs };
}
