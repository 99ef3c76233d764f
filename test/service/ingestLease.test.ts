/**
 * The workspace's ingest lease (`.pi/pbot/ingest.lock`): a process that would read many session
 * files while another pbot process reads them waits for it, then finds them archived and reads
 * none of them again. Fewer files never wait; a stopped wait reads nothing and leaves the other's
 * lease alone. The other process is a real one (a child holding the lease in the middle of its
 * files until told to go on), so nothing here depends on timing.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { BULK_FILES } from "../../src/services/history/service/ingestRun.ts";
import type { LeaseHolder } from "../../src/services/history/service/ports.ts";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import { workspaceCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { INGEST_LOCK_FILE, workspaceArchiveStore, workspaceIngestLease, workspaceTextStore } from "../../src/storage/history-files/index.ts";
import { folderScope } from "../../src/storage/history-files/paths.ts";
import { exited, lineFrom, spawnChild } from "../durability/children/spawn.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

const cleanups = foldersRemovedAfter("each");

async function workspaceOf(files: number, prefix: string) {
	const ws = await generatedWorkspace(prefix);
	cleanups.push(ws.workspace);
	for (let i = 0; i < files; i++) await ws.write(300 + i, { profile: "chat", targetBytes: 4_000, startMs: Date.UTC(2026, 1, 1) + i * 3_600_000 });
	/** The workspace's history as a process opens it, telling `onWait` of its waits. */
	const open = (onWait: (holder: LeaseHolder | undefined) => void) =>
		openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false, onWait });
	return { ...ws, open };
}

/** A lease as a live pbot process of this host holds it (this test's parent: alive, and not this process). */
function plantLease(workspace: string): string {
	const file = join(workspace, INGEST_LOCK_FILE);
	writeFileSync(
		file,
		JSON.stringify({ pid: process.ppid, host: hostname(), at: new Date().toISOString(), token: "theirs", scope: folderScope(dirname(file)) }),
	);
	return file;
}

describe("the workspace's ingest lease", () => {
	it("makes an ingest wait for another process reading the same files, which it then does not read again", { timeout: 60_000 }, async () => {
		const files = BULK_FILES + 4;
		const ws = await workspaceOf(files, "pbot-lease-");
		const go = join(ws.workspace, "go");
		const child = spawnChild("leaseHolderChild.ts", [ws.workspace, ws.sessions, ws.agentDir, go]);
		await lineFrom(child, "holding");
		const waits: (LeaseHolder | undefined)[] = [];
		const service = ws.open((h) => void waits.push(h));
		let settled = false;
		const refreshed = service.refresh({ checkArchives: true }).finally(() => {
			settled = true;
		});
		// It waits, told who for, and reads nothing while the other holds the lease.
		await waitFor(() => waits.length > 0, "the wait for the other process");
		expect(waits[0]).toMatchObject({ pid: child.pid, host: hostname() });
		await new Promise((r) => setTimeout(r, 300));
		expect(settled).toBe(false);
		writeFileSync(go, "");
		const childRead = lineFrom(child, "read ");
		expect(await exited(child), child.stderrText()).toMatchObject({ code: 0 });
		expect(Number(await childRead)).toBe(files);
		const report = await refreshed;
		// Everything was archived by the other process: none read here, and the wait is said to be over.
		expect(report.sessions).toEqual([]);
		expect(report.unchangedFiles).toBe(files);
		expect(waits).toHaveLength(2);
		expect(waits[1]).toBeUndefined();
		expect((await service.sessions({ limit: 0 })).total).toBe(files);
		expect(service.takeWarnings()).toEqual([]);
	});

	it("does not wait when it reads only a few files", async () => {
		const files = BULK_FILES - 1;
		const ws = await workspaceOf(files, "pbot-lease-few-");
		const waits: unknown[] = [];
		const service = ws.open((h) => void waits.push(h));
		await service.refresh();
		const lock = plantLease(ws.workspace);
		// New files after the lease was taken by another process: read at once.
		for (let i = 0; i < 2; i++) await ws.write(400 + i, { profile: "chat", targetBytes: 4_000, startMs: Date.UTC(2026, 2, 1) + i * 3_600_000 });
		const report = await service.refresh();
		expect(report.sessions).toHaveLength(2);
		expect(waits).toEqual([]);
		expect(JSON.parse(readFileSync(lock, "utf8")).token).toBe("theirs");
	});

	it("stopped while waiting: reads nothing, says every file is left, and leaves the other's lease", { timeout: 30_000 }, async () => {
		const files = BULK_FILES + 2;
		const ws = await workspaceOf(files, "pbot-lease-stop-");
		mkdirSync(join(ws.workspace, ".pi", "pbot"), { recursive: true });
		const lock = plantLease(ws.workspace);
		const controller = new AbortController();
		const service = ws.open((h) => void (h && controller.abort()));
		const report = await service.refresh({ checkArchives: true, signal: controller.signal });
		expect(report.stopped).toBe(files);
		expect(report.sessions).toEqual([]);
		expect(JSON.parse(readFileSync(lock, "utf8")).token).toBe("theirs");
	});

	it("stops waiting for a holder that renews the lease but never ends, and reads the files itself, saying why", { timeout: 30_000 }, async () => {
		const files = BULK_FILES + 1;
		const ws = await workspaceOf(files, "pbot-lease-bound-");
		mkdirSync(join(ws.workspace, ".pi", "pbot"), { recursive: true });
		plantLease(ws.workspace);
		const waits: unknown[] = [];
		const service = new HistoryService({
			store: workspaceArchiveStore(ws.workspace),
			discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }),
			checkpoints: workspaceCheckpointStore(ws.workspace),
			text: workspaceTextStore(ws.workspace),
			lease: workspaceIngestLease(ws.workspace, { waitAtMostMs: 300 }),
			onWait: (h) => void waits.push(h),
		});
		const report = await service.refresh();
		expect(report.sessions).toHaveLength(files);
		expect(report.warnings.join("\n")).toMatch(
			new RegExp(`ingest lease: ingest\\.lock is held by pid ${process.ppid} on .*; reading the session files here too`),
		);
		expect(waits).toHaveLength(2);
	});

	it("does not wait for a lease copied with the workspace (its holder alive, but holding the original's)", { timeout: 30_000 }, async () => {
		const files = BULK_FILES + 1;
		const original = await workspaceOf(files, "pbot-lease-orig-");
		const go = join(original.workspace, "go");
		const child = spawnChild("leaseHolderChild.ts", [original.workspace, original.sessions, original.agentDir, go]);
		cleanups.push(original.workspace);
		await lineFrom(child, "holding");
		// The workspace copied while the other process holds its lease (its sessions with it).
		const copy = await generatedWorkspace("pbot-lease-copy-");
		cleanups.push(copy.workspace);
		cpSync(join(original.workspace, ".pi"), join(copy.workspace, ".pi"), { recursive: true });
		cpSync(original.sessions, copy.sessions, { recursive: true });
		expect(existsSync(join(copy.workspace, INGEST_LOCK_FILE))).toBe(true);
		const waits: unknown[] = [];
		const service = openWorkspaceHistory({
			workspace: copy.workspace,
			sessionDirs: [copy.sessions],
			agentDir: copy.agentDir,
			migrate: false,
			onWait: (h) => void waits.push(h),
		});
		const report = await service.refresh();
		expect(waits).toEqual([]);
		expect(report.sessions.length + report.unchangedFiles).toBe(files);
		writeFileSync(go, "");
		expect(await exited(child), child.stderrText()).toMatchObject({ code: 0 });
	});
});
