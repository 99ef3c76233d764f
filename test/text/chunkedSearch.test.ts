/**
 * A search reads each session's text a chunk at a time and searches every chunk as it is read
 * (`ChunkMatcher`, `StoredTexts.search`). Whatever the chunk size, it must find the rows a search
 * of the whole text finds (`SessionText.matching`): matches across chunk seams, several matches in
 * one row, matches at the very start and end, needles longer than a chunk.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { memoryTextStore } from "../../src/services/history/projections/text/memoryTextStore.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { StoredTexts } from "../../src/services/history/projections/text/storedTexts.ts";
import { foldText } from "../../src/services/history/query/index.ts";
import { textDir } from "../../src/storage/history-files/index.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

let workspace: string;
let text: SessionText;
let sessionId: string;

beforeAll(async () => {
	const made = await generatedWorkspace("pbot-chunks-");
	({ workspace } = made);
	const { sessions, agentDir } = made;
	sessionId = (await made.write(77, { profile: "chat", targetBytes: 300_000, targetQa: 80, startMs: Date.UTC(2025, 2, 1) })).id;
	const service = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false });
	await service.ingest();
	text = SessionText.parse(await readFile(join(textDir(workspace), `${sessionId}.text`)), sessionId, "whole");
});

afterAll(async () => {
	await rm(workspace, { recursive: true, force: true });
});

/** The folded text of every row, as the file holds it (separators included). */
function section(): Buffer {
	return text.bodySlice(text.textAt, text.originalAt);
}

/** Needles drawn from the section itself (so they match), across row ends too, and some that match nothing. */
function needles(count: number, seed: number): Buffer[] {
	const rng = createRng(seed);
	const bytes = section();
	const out: Buffer[] = [Buffer.from("zzzz-not-there"), Buffer.from(foldText("的").folded)];
	while (out.length < count) {
		const at = rng.int(bytes.length - 2);
		const piece = bytes.subarray(at, at + rng.range(1, 40));
		// Never across a row's end: a needle holds no 0xFF (folded UTF-8 never does).
		const cut = piece.indexOf(0xff);
		const needle = cut < 0 ? piece : piece.subarray(0, cut);
		if (needle.length > 0) out.push(Buffer.from(needle));
	}
	// The section's first and last bytes.
	out.push(Buffer.from(bytes.subarray(0, 12)));
	const last = bytes.lastIndexOf(0xff, bytes.length - 2);
	out.push(Buffer.from(bytes.subarray(last + 1, bytes.length - 1)));
	return out;
}

describe("searching a session's text a chunk at a time", () => {
	it("finds the rows a whole-text search finds, for every chunk size", () => {
		const bytes = section();
		expect(text.docs).toBeGreaterThan(50);
		let found = 0;
		for (const [n, needle] of needles(150, 3).entries()) {
			const expected = text.matching(needle);
			found += expected.length;
			// Byte by byte for some needles (slow), every seam for all.
			for (const size of n < 20 ? [1, 2, 3, 5, 17, 256, 4096, bytes.length] : [5, 17, 256, 4096, bytes.length]) {
				// Told which chunk is the last (as a search's read says) or not (the seam kept regardless).
				for (const told of [false, true]) {
					const matcher = text.matcher(needle);
					for (let at = 0; at < bytes.length; at += size) {
						const end = Math.min(bytes.length, at + size);
						matcher.feed(bytes.subarray(at, end), at, told && end === bytes.length);
					}
					expect(matcher.rows, `${JSON.stringify(needle.toString())} in chunks of ${size}`).toEqual(expected);
				}
			}
		}
		// The needles were taken from the text: most match (the test would pass vacuously otherwise).
		expect(found).toBeGreaterThan(150);
	});

	it("reads the file in chunks through the store and gives the rows and their meta", async () => {
		const store = memoryTextStore();
		const bytes = await readFile(join(textDir(workspace), `${sessionId}.text`));
		await store.write(sessionId, bytes);
		// Known by its header line only (a new process): the file is read from its start.
		const header = SessionText.parse(Buffer.from(bytes.subarray(0, text.headerBytes())), sessionId, "header");
		let checked = 0;
		for (const chunk of [7, 1000, 1 << 20]) {
			const stored = new StoredTexts(store, chunk);
			for (const needle of needles(40, 11)) {
				const searched = await stored.searchFile(header, needle);
				expect(searched).toBeDefined();
				const rows = searched?.matching(needle) ?? [];
				expect(rows).toEqual(text.matching(needle));
				checked += rows.length;
				// The rows are for that needle only.
				expect(() => searched?.matching(Buffer.from(`${needle.toString("latin1")}x`, "latin1"))).toThrow(/another needle/);
				for (const row of rows) {
					expect(searched?.meta(row)).toEqual(text.meta(row));
					expect([searched?.id(row), searched?.endMs(row), searched?.level(row)]).toEqual([text.id(row), text.endMs(row), text.level(row)]);
				}
			}
		}
		expect(checked).toBeGreaterThan(40);
		// Another revision's file under the same name: not searched as this one.
		const other = Buffer.from(bytes);
		other.write(
			text.revision.replace(/./, (c) => (c === "9" ? "8" : "9")),
			other.indexOf(text.revision),
			"latin1",
		);
		await store.write(sessionId, other);
		expect(await new StoredTexts(store, 1000).searchFile(header, Buffer.from("the"))).toBeUndefined();
		await store.write(sessionId, bytes);
		// A file shorter than its head says (cut short): not searched, read again by the caller.
		await store.write(sessionId, bytes.subarray(0, text.originalAt - 1));
		expect(await new StoredTexts(store, 1000).searchFile(header, Buffer.from("the"))).toBeUndefined();
	});
});
