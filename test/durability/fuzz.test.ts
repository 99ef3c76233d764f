/**
 * Hostile input: the real fixtures, mutated deterministically (seeded), through the whole
 * pipeline, the archive projection and the query view. What counts as a bad line is stated in
 * `fuzz/oracle.ts`; the test checks that exactly those lines are rejected.
 */
import { from, lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { applyArchiveEvents, initialArchiveState, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { readNode, searchHistory } from "../../src/services/history/query/index.ts";
import { buildQueryView } from "../../src/services/history/projections/queryView.ts";
import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import { sessionIdFromFileName } from "../../src/services/history/model/sessionFileName.ts";
import { fixtureBytes, fixturePath } from "../helpers/fixtures.ts";
import { fixtureIndex } from "../query/helpers.ts";
import { MUTATIONS, prng, splitBytes, type Random } from "./fuzz/mutations.ts";
import { expectFrom } from "./fuzz/oracle.ts";

const SEEDS_PER_MUTATION = 3;
/** A hang guard, not a performance target. */
const PER_FILE_LIMIT_MS = 10_000;
const decoder = new TextDecoder();
/** Every fixture with content: Pi's own files, the legacy v1/v2 copies and the damaged ones. */
const KEYS = Object.keys(fixtureIndex.sessions).filter((key) => key !== "empty");

/** Cuts bytes into chunks of random sizes (1 B to 64 KB), as reads of a growing file would. */
function randomChunks(bytes: Uint8Array, random: Random): Uint8Array[] {
	const chunks: Uint8Array[] = [];
	for (let at = 0; at < bytes.length; ) {
		const size = 1 + Math.floor(random() ** 3 * 65_536);
		chunks.push(bytes.subarray(at, at + size));
		at += size;
	}
	return chunks;
}

async function pipelineEvents(chunks: readonly Uint8Array[], mode: "replay" | "live", fallbackSessionId: string): Promise<HistoryEvent[][]> {
	return lastValueFrom(from(chunks).pipe(sessionPipeline({ mode, fallbackSessionId }), toArray()));
}

function archiveFrom(batches: readonly HistoryEvent[][]): SessionArchive | undefined {
	let state = initialArchiveState();
	for (const batch of batches) state = applyArchiveEvents(state, batch);
	return Object.values(state.sessions)[0];
}

function partsOf(archive: SessionArchive | undefined): Set<string> {
	const out = new Set<string>();
	for (const node of Object.values(archive?.nodes ?? {})) for (const p of node.parts) out.add(`${p.kind}|${p.entryId}|${p.text}`);
	return out;
}

/** Runs one mutated file through everything and checks it against the oracle. */
async function checkFile(bytes: Uint8Array, original: ReadonlySet<string>, fallbackSessionId: string, random: Random, label: string): Promise<number> {
	const started = performance.now();
	const batches = await pipelineEvents(randomChunks(bytes, random), "replay", fallbackSessionId);
	const events = batches.flat();
	const archive = archiveFrom(batches);
	const view = buildQueryView(archive ? { sessions: { [archive.session.sessionId]: archive } } : initialArchiveState());
	searchHistory(view, { query: "the" });
	searchHistory(view, { query: "\ufffd" });
	for (const id of Object.keys(archive?.nodes ?? {}).slice(0, 3)) readNode(view, { id });
	const elapsed = performance.now() - started;

	const expected = expectFrom(bytes, (text) => original.has(text));
	const rejected = new Set(events.flatMap((e) => (e.type === "LineRejected" ? [e.rejection.line] : [])));
	expect(
		[...rejected].sort((a, b) => a - b),
		`${label}: rejected lines`,
	).toEqual([...expected.rejected].sort((a, b) => a - b));
	// Where and why, never the line's text.
	for (const e of events) if (e.type === "LineRejected") expect(Object.keys(e.rejection).sort(), label).toEqual(expect.arrayContaining(["line", "reason"]));
	for (const e of events) if (e.type === "LineRejected") expect((e.rejection as unknown as Record<string, unknown>).sample, label).toBeUndefined();
	const found = partsOf(archive);
	const missing = [...expected.parts].filter((p) => !found.has(p));
	expect(
		missing.map((p) => p.slice(0, 120)),
		`${label}: Q&A parts lost`,
	).toEqual([]);
	expect(elapsed, `${label}: time`).toBeLessThan(PER_FILE_LIMIT_MS);
	return elapsed;
}

describe("hostile session files", () => {
	for (const mutation of MUTATIONS) {
		it(`survives ${mutation.name}: no crash, no hang, bad lines rejected, good Q&A kept`, async () => {
			let slowest = 0;
			for (const key of KEYS) {
				const original = await fixtureBytes(key);
				const originalLines = new Set(splitBytes(original).map((l) => decoder.decode(l)));
				const fallback = sessionIdFromFileName(fixturePath(key)) as string;
				for (let seed = 1; seed <= SEEDS_PER_MUTATION; seed++) {
					const random = prng(seed * 7919 + key.length * 31 + mutation.name.length);
					const mutated = mutation.apply(original, random);
					slowest = Math.max(slowest, await checkFile(mutated, originalLines, fallback, random, `${key} / ${mutation.name} / seed ${seed}`));
				}
			}
			expect(slowest).toBeLessThan(PER_FILE_LIMIT_MS);
		});
	}

	it("ends a live tail, fed in random chunks, where a replay of the same mutated file ends", async () => {
		for (const key of KEYS) {
			const original = await fixtureBytes(key);
			const fallback = sessionIdFromFileName(fixturePath(key)) as string;
			for (const mutation of MUTATIONS) {
				if (mutation.name === "huge lines") continue; // live re-derives per chunk: thousands of chunks of a 2 MB line
				const random = prng(104_729 + key.length + mutation.name.length);
				const mutated = mutation.apply(original, random);
				const replay = archiveFrom(await pipelineEvents([mutated], "replay", fallback));
				const live = archiveFrom(await pipelineEvents(randomChunks(mutated, random), "live", fallback));
				expect(live, `${key} / ${mutation.name}`).toEqual(replay);
			}
		}
	});

	it("rejects a 50 MB single line within the time bound and keeps every Q&A around it", async () => {
		const key = "steer-followup-abort";
		const original = await fixtureBytes(key);
		const fallback = sessionIdFromFileName(fixturePath(key)) as string;
		const lines = splitBytes(original);
		// JSON that only turns out to be broken at its very end: the parser has to read all of it.
		const huge = new TextEncoder().encode(`{"type":"message","id":"huge","message":{"role":"user","content":"${"z".repeat(50 * 1024 * 1024)}"`);
		const bytes = new Uint8Array(original.length + huge.length + 1);
		const cut = lines.slice(0, 6).reduce((n, l) => n + l.length + 1, 0);
		bytes.set(original.subarray(0, cut), 0);
		bytes.set(huge, cut);
		bytes[cut + huge.length] = 0x0a;
		bytes.set(original.subarray(cut), cut + huge.length + 1);

		const clean = archiveFrom(await pipelineEvents([original], "replay", fallback));
		for (const chunkSize of [1 << 20, 1 << 16]) {
			const chunks: Uint8Array[] = [];
			for (let at = 0; at < bytes.length; at += chunkSize) chunks.push(bytes.subarray(at, at + chunkSize));
			const started = performance.now();
			const batches = await pipelineEvents(chunks, "replay", fallback);
			const elapsed = performance.now() - started;
			expect(elapsed).toBeLessThan(PER_FILE_LIMIT_MS);
			const rejections = batches.flat().filter((e) => e.type === "LineRejected");
			expect(rejections.map((e) => e.rejection.line)).toEqual([7]);
			expect(rejections[0]!.rejection.bytes).toBeGreaterThan(50_000_000);
			const archive = archiveFrom(batches)!;
			expect(archive.nodes).toEqual(clean!.nodes);
			expect(archive.branches).toEqual(clean!.branches);
		}
	});
});
