/**
 * A line longer than pbot reads (a configured limit here, 128 MB by default) is rejected alone: the
 * Q&A before and after it are extracted, the file is checkpointed (not read again at every query),
 * and nothing of the line is kept.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import { memoryCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { memoryArchiveStore } from "../../src/storage/history-files/index.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

describe("an oversized line", () => {
	for (const chunked of [false, true]) {
		it(`is rejected alone; the rest of the file is extracted and checkpointed (${chunked ? "longer than a read chunk" : "within one chunk"})`, async () => {
			const workspace = await mkdtemp(join(tmpdir(), "pbot-oversized-"));
			cleanups.push(workspace);
			const sessions = join(workspace, "sessions");
			await mkdir(sessions);
			const big = `${"secret ".repeat(chunked ? 400_000 : 1_000)}`; // 2.8 MB (read chunks are 1 MB) or 7 KB
			const bytes = jsonl([
				header(),
				user("u1", null, "What is before the big line?"),
				reply("a1", "u1", "The first answer."),
				user("u2", "a1", `A pasted log: ${big}`),
				reply("a2", "u2", "That was long."),
				user("u3", "a2", "What is after it?"),
				reply("a3", "u3", "The last answer."),
			]);
			await writeFile(join(sessions, "2026-03-01T00-00-00-000Z_0190aaaa-0000-7000-8000-000000000001.jsonl"), bytes);
			const checkpoints = memoryCheckpointStore();
			const open = () => new HistoryService({ store, discovery: fileDiscovery({ workspace, sessionDirs: [sessions] }), checkpoints, maxLineBytes: 4096 });
			const store = memoryArchiveStore();
			const first = await open().refresh();
			expect(first.warnings).toEqual([]);
			const [session] = first.sessions;
			expect(session?.rejectedLines).toBe(1);
			const service = open();
			expect((await service.search({ query: "first answer" })).total).toBe(1);
			expect((await service.search({ query: "last answer" })).total).toBe(1);
			expect((await service.search({ query: "secret" })).total).toBe(0);
			const archive = await store.read("0190aaaa-0000-7000-8000-000000000001");
			expect(archive?.rejections.lines).toEqual([
				{ line: 4, reason: expect.stringMatching(/^a line of \d+ bytes, longer than pbot reads/), bytes: expect.any(Number) },
			]);
			expect(JSON.stringify(archive)).not.toContain("secret");
			// Checkpointed: the next process does not read the file again.
			const again = await open().refresh();
			expect(again.sessions).toEqual([]);
			expect(again.unchangedFiles).toBe(1);
		});
	}
});
