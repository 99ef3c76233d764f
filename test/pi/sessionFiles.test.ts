import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastValueFrom, map, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { readFileChunks, readFileChunksReusing, readSessionHead, sourceState } from "../../src/integrations/pi/history/sessionFiles.ts";
import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import { createRng } from "../../bench/generator/prng.ts";
import { generateSession } from "../../bench/generator/session.ts";

/** Runs `fn` in a new temporary folder, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
	const dir = await mkdtemp(join(tmpdir(), "pbot-files-"));
	try {
		await fn(dir);
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

describe("reading session files for a replay", () => {
	it("streams every byte of a file larger than its reused buffer, to a reader that copies what it keeps", async () => {
		await inTempDir(async (dir) => {
			const bytes = Buffer.alloc(3 * 1024 * 1024 + 12_345);
			for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
			const file = join(dir, "a.jsonl");
			await writeFile(file, bytes);
			const chunks = await lastValueFrom(
				readFileChunksReusing(file).pipe(
					map((c) => Buffer.from(c)),
					toArray(),
				),
			);
			expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
			// Two reads at once each get their own buffer.
			const [a, b] = await Promise.all(
				[0, 1].map(() =>
					lastValueFrom(
						readFileChunksReusing(file).pipe(
							map((c) => Buffer.from(c)),
							toArray(),
						),
					),
				),
			);
			expect(Buffer.concat(a as Buffer[]).equals(bytes) && Buffer.concat(b as Buffer[]).equals(bytes)).toBe(true);
			await expect(lastValueFrom(readFileChunksReusing(join(dir, "missing.jsonl")))).rejects.toThrow();
		});
	});

	it("reads a few chunks per turn of the event loop, and stops when unsubscribed", async () => {
		await inTempDir(async (dir) => {
			const file = join(dir, "big.jsonl");
			await writeFile(file, Buffer.alloc(12 * 1024 * 1024 + 1, 0x61));
			// Work queued while the file is read runs before the read ends: the loop is not held.
			let chunks = 0;
			let chunksWhenOtherWorkRan = -1;
			await lastValueFrom(
				readFileChunksReusing(file).pipe(
					map(() => {
						if (chunks++ === 0) setImmediate(() => (chunksWhenOtherWorkRan = chunks));
					}),
				),
			);
			expect(chunks).toBe(13);
			expect(chunksWhenOtherWorkRan).toBeGreaterThan(0);
			expect(chunksWhenOtherWorkRan).toBeLessThan(chunks);
			// Unsubscribed after the first chunk: no more chunks, no error, and the next read works.
			let seen = 0;
			const subscription = readFileChunksReusing(file).subscribe({ next: () => (++seen === 1 ? subscription?.unsubscribe() : undefined) });
			await new Promise((r) => setTimeout(r, 50));
			expect(seen).toBe(1);
			expect(
				await lastValueFrom(
					readFileChunksReusing(file).pipe(
						map((c) => c.length),
						toArray(),
					),
				),
			).toHaveLength(13);
		});
	});

	it("refuses what is not a regular file (a folder or a FIFO named like a session file) without waiting on it", async () => {
		await inTempDir(async (dir) => {
			await mkdir(join(dir, "folder.jsonl"));
			await expect(lastValueFrom(readFileChunksReusing(join(dir, "folder.jsonl")))).rejects.toThrow(/not a regular file/);
			const fifo = join(dir, "pipe.jsonl");
			if (spawnSync("mkfifo", [fifo]).status !== 0) return; // no mkfifo here: the folder case stands
			await expect(lastValueFrom(readFileChunksReusing(fifo))).rejects.toThrow(/not a regular file/);
			// Nor do the checkpoint state and the header read (discovery) wait on it.
			expect(await sourceState(fifo)).toBeUndefined();
			expect(await readSessionHead(fifo)).toBeUndefined();
		});
	});

	// Regression: splitLines kept the tail of a chunk with `chunk.slice()`, a view on a Node Buffer,
	// so a reader that reuses its buffer corrupted every line that crossed a chunk boundary.
	it("gives the replay pipeline the same events as a fresh-buffer stream, for lines across chunk boundaries", async () => {
		await inTempDir(async (dir) => {
			const lines: string[] = [];
			generateSession(createRng(11), { profile: "agent", targetBytes: 3_500_000, startMs: Date.UTC(2025, 0, 1) }, (l) => lines.push(l));
			const file = join(dir, "2025-01-01T00-00-00-000Z_019c0000-0000-7000-8000-0000000000aa.jsonl");
			await writeFile(file, `${lines.join("\n")}\n`);
			const replay = (read: typeof readFileChunks) => lastValueFrom(read(file).pipe(sessionPipeline({ mode: "replay" })));
			const reused = await replay(readFileChunksReusing);
			expect(reused.filter((e) => e.type === "LineRejected")).toEqual([]);
			expect(reused).toEqual(await replay(readFileChunks));
		});
	});

	it("reads a session header of any length up to the limit, from its first line only", async () => {
		await inTempDir(async (dir) => {
			// Short, across the first read's size, and a header many times that (read in growing steps).
			for (const pad of [0, 2040, 50_000]) {
				const file = join(dir, `h${pad}.jsonl`);
				const head = { type: "session", version: 3, id: `id-${pad}`, cwd: `/w/${"x".repeat(pad)}`, parentSession: "/p/a.jsonl" };
				const next = JSON.stringify({ type: "message", id: "m1", cwd: "/elsewhere" });
				await writeFile(file, `${JSON.stringify(head)}\n${next}\n${"y".repeat(100_000)}\n`);
				expect(await readSessionHead(file)).toEqual({ id: head.id, cwd: head.cwd, parentSession: head.parentSession, version: 3 });
			}
			// Past the limit (64 KB) it is not a header.
			const long = join(dir, "long.jsonl");
			await writeFile(long, `${JSON.stringify({ type: "session", id: "x", cwd: "x".repeat(70_000) })}\n`);
			expect(await readSessionHead(long)).toBeUndefined();
			// A header with no newline yet (Pi writing it) is read whole.
			const open = join(dir, "open.jsonl");
			await writeFile(open, JSON.stringify({ type: "session", id: "o", cwd: "/w" }));
			expect(await readSessionHead(open)).toEqual({ id: "o", cwd: "/w" });
		});
	});

	it("gives a checkpoint state keyed by session id and file name, without the folder", async () => {
		await inTempDir(async (dir) => {
			const file = join(dir, "2026-01-01T00-00-00-000Z_019c0000-0000-7000-8000-000000000001.jsonl");
			await writeFile(file, '{"type":"session","version":3,"id":"019c0000-0000-7000-8000-000000000001"}\n');
			const state = await sourceState(file);
			expect(state?.key).toBe("019c0000-0000-7000-8000-000000000001/2026-01-01T00-00-00-000Z_019c0000-0000-7000-8000-000000000001.jsonl");
			expect(state?.key).not.toContain(dir);
			expect(state?.size).toBe(75);
			expect(await sourceState(join(dir, "gone.jsonl"))).toBeUndefined();
		});
	});
});
