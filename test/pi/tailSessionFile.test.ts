import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyArchiveEvents, initialArchiveState, type ArchiveState } from "../../src/services/history/projections/archive.ts";
import { tailSessionFile } from "../../src/integrations/pi/history/tailSessionFile.ts";
import { lastValueFrom, of, toArray } from "rxjs";
import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import { fixtureArchive, fixtureBytes, texts } from "../helpers/fixtures.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";
import { waitFor } from "../helpers/waitFor.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

async function tailInto(file: string) {
	let state: ArchiveState = initialArchiveState();
	let batches = 0;
	const sub = tailSessionFile(file).subscribe((events) => {
		batches++;
		state = applyArchiveEvents(state, events);
	});
	cleanups.push(() => sub.unsubscribe());
	return { state: () => state, batches: () => batches, sub };
}

const qaTexts = (state: ArchiveState) =>
	Object.values(state.sessions)
		.flatMap((a) => Object.values(a.nodes).map((n) => texts(n).join("|")))
		.sort();

describe("tailSessionFile", () => {
	it("makes appended Q&A visible while the file grows, holding half-written lines", async () => {
		const dir = await mkdtemp(join(tmpdir(), "pbot-tail-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const file = join(dir, "live.jsonl");
		const bytes = await fixtureBytes("many-qa-72");
		const expected = Object.values((await fixtureArchive("many-qa-72")).nodes)
			.map((n) => texts(n).join("|"))
			.sort();
		const tail = await tailInto(file); // the file does not exist yet: Pi writes it with the first answer

		// Write in odd-sized pieces so lines are split mid-way.
		const piece = Math.ceil(bytes.length / 7) + 13;
		await writeFile(file, bytes.subarray(0, piece));
		for (let at = piece; at < bytes.length; at += piece) {
			await waitFor(() => tail.batches() > 0 || at > piece, "first events");
			await appendFile(file, bytes.subarray(at, Math.min(bytes.length, at + piece)));
		}
		await waitFor(() => qaTexts(tail.state()).length === 72 && qaTexts(tail.state()).join() === expected.join(), "all 72 Q&A");
		expect(Object.values(tail.state().sessions)[0]?.rejections.count).toBe(0);
	});

	it("reads a long file a chunk at a time, letting the event loop turn, and derives it once", async () => {
		const made = await generatedWorkspace("pbot-tail-long-");
		cleanups.push(() => rm(made.workspace, { recursive: true, force: true }));
		const { name } = await made.write(811, { profile: "agent", targetBytes: 3_500_000, startMs: Date.UTC(2025, 6, 1) });
		const file = join(made.sessions, name);
		const bytes = await readFile(file);
		expect(bytes.length).toBeGreaterThan(3 << 20); // several of the tail's 1 MB chunks
		// The whole file through the replay pipeline in one piece: what the tail must end up with.
		const replayed = (await lastValueFrom(of(new Uint8Array(bytes)).pipe(sessionPipeline({ mode: "replay" }), toArray()))).flat();
		const expected = applyArchiveEvents(initialArchiveState(), replayed);
		expect(Object.keys(Object.values(expected.sessions)[0]?.nodes ?? {}).length).toBeGreaterThan(10);

		let turns = 0;
		let reading = true;
		const tick = () => {
			if (!reading) return;
			turns++;
			setImmediate(tick);
		};
		setImmediate(tick);
		let state: ArchiveState = initialArchiveState();
		const batches: number[] = [];
		const sub = tailSessionFile(file, { sliceMs: 0 }).subscribe((events) => {
			batches.push(events.length);
			state = applyArchiveEvents(state, events);
		});
		cleanups.push(() => sub.unsubscribe());
		await waitFor(() => batches.length > 0, "the first events");
		reading = false;
		// Turns between the chunks (a slice of 0 ms pauses after each), and one derivation at the end.
		expect(turns).toBeGreaterThanOrEqual(3);
		await new Promise((r) => setTimeout(r, 200));
		expect(batches).toHaveLength(1);
		expect(state).toEqual(expected);
	});

	it("reads a rewritten (shorter) file again from the start", async () => {
		const dir = await mkdtemp(join(tmpdir(), "pbot-tail-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const file = join(dir, "live.jsonl");
		await writeFile(file, await fixtureBytes("many-qa-72"));
		const tail = await tailInto(file);
		await waitFor(() => qaTexts(tail.state()).length === 72, "72 Q&A");
		const smaller = await fixtureBytes("steer-followup-abort");
		await writeFile(file, smaller);
		const expected = Object.values((await fixtureArchive("steer-followup-abort")).nodes).map((n) => texts(n).join("|"));
		await waitFor(() => {
			const all = qaTexts(tail.state());
			return expected.every((t) => all.includes(t));
		}, "the rewritten file's Q&A");
	});

	it("closes its watcher when unsubscribed: later writes are not read", async () => {
		const dir = await mkdtemp(join(tmpdir(), "pbot-tail-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const file = join(dir, "live.jsonl");
		const bytes = await fixtureBytes("steer-followup-abort");
		const half = bytes.indexOf(0x0a, bytes.length >> 1) + 1;
		await writeFile(file, bytes.subarray(0, half));
		const tail = await tailInto(file);
		await waitFor(() => tail.batches() > 0, "first batch");
		tail.sub.unsubscribe();
		const before = tail.batches();
		await appendFile(file, bytes.subarray(half));
		// A second, independent tail sees the new bytes: proof they were written and readable.
		const other = await tailInto(file);
		await waitFor(() => qaTexts(other.state()).length === 4, "second tail reads the whole file");
		expect(tail.batches()).toBe(before);
	});
});
