/**
 * An ingest stopped by its signal (the CLI's Ctrl+C): no file is started after it, the files read
 * are stored as in a whole run — archives, the pack a first ingest makes, checkpoints — and the next
 * run reads only the rest. Stopped at a fixed point through the progress listener, so the test
 * does not depend on timing.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

const cleanups = foldersRemovedAfter("each");

/** Sessions enough for a first ingest to pack their search text (64 or more files). */
const FILES = 80;

describe("an ingest stopped by its signal", () => {
	it("stores what it read (archives, pack, checkpoints), says how many files are left, and the next run reads only those", { timeout: 60_000 }, async () => {
		const ws = await generatedWorkspace("pbot-stopped-");
		cleanups.push(ws.workspace);
		for (let i = 0; i < FILES; i++) await ws.write(100 + i, { profile: "chat", targetBytes: 6_000, startMs: Date.UTC(2026, 0, 1) + i * 3_600_000 });
		const controller = new AbortController();
		const open = (stopAt?: number) =>
			openWorkspaceHistory({
				workspace: ws.workspace,
				sessionDirs: [ws.sessions],
				agentDir: ws.agentDir,
				migrate: false,
				...(stopAt !== undefined ? { progress: (work, done) => void (work === "sessions" && done === stopAt && controller.abort()) } : {}),
			});
		const first = open(10);
		const stopped = await first.refresh({ checkArchives: true, signal: controller.signal });
		// The file read ahead when the signal came is still applied: 10 or 11 read.
		expect(stopped.stopped).toBeGreaterThanOrEqual(FILES - 11);
		expect(stopped.stopped).toBeLessThanOrEqual(FILES - 10);
		const read = FILES - (stopped.stopped as number);
		expect(stopped.sessions.length).toBe(read);
		expect(stopped.sessions.every((s) => s.written && s.failed !== true)).toBe(true);
		const pbot = join(ws.workspace, ".pi", "pbot");
		expect(readdirSync(join(pbot, "history")).filter((n) => n.endsWith(".json"))).toHaveLength(read);
		// The first ingest's pack is in place, and no temporary file is left.
		expect(existsSync(join(pbot, "text", "pack.cache"))).toBe(true);
		expect(readdirSync(join(pbot, "history")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
		// A new process (no memory of the run) reads only the files left: the checkpoints of the files
		// read were saved, and their search text is in the pack (nothing made again, no warning).
		const again = open();
		const next = await again.refresh({ checkArchives: true });
		expect(next.stopped).toBeUndefined();
		expect(next.unchangedFiles).toBe(read);
		expect(next.sessions.length).toBe(FILES - read);
		expect(again.takeWarnings()).toEqual([]);
		const all = open();
		expect((await all.sessions({ limit: 0 })).total).toBe(FILES);
		expect(all.takeWarnings().join("\n")).not.toMatch(/rebuilt/);
	});

	it("reads nothing when stopped before it starts, and says every file is left", async () => {
		const ws = await generatedWorkspace("pbot-stopped-early-");
		cleanups.push(ws.workspace);
		for (let i = 0; i < 5; i++) await ws.write(300 + i, { profile: "chat", targetBytes: 4_000, startMs: Date.UTC(2026, 1, 1) + i * 3_600_000 });
		const service = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
		const report = await service.ingest({ signal: AbortSignal.abort() });
		expect(report).toMatchObject({ sessions: [], stopped: 5 });
		expect(existsSync(join(ws.workspace, ".pi", "pbot", "history"))).toBe(false);
	});
});
