import { cp, mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { runSummaryPass } from "../../src/services/history/summaries/summaryWorker.ts";
import { PBOT_DIR } from "../../src/storage/history-files/index.ts";
import { fauxSummaryModel } from "./children/shared.ts";
import { archivesOf, archiveTexts, readyEveryOther, useNativeWorkspaces } from "./helpers.ts";

/** A fresh workspace of real Pi sessions per call, removed after each test. */
const setup = useNativeWorkspaces();

/** Everything a person or the model can ask of a service: sessions, searches, and a read of every node. */
async function answers(service: HistoryService): Promise<unknown[]> {
	const out: unknown[] = [];
	const sessions = await service.sessions({ limit: 50 });
	out.push(sessions);
	for (const query of ["the", "Summary of", "build", "README", "é", "zz-no-such-text", "greet"]) {
		out.push(await service.search({ query, limit: 50 }));
		out.push(await service.search({ query, limit: 5, offset: 5 }));
	}
	out.push(await service.search({ query: "the", from: "2026-03-05", to: "2026-03-09" }));
	// Every node id, from the archives themselves (queries above read only what they showed).
	await service.load();
	const view = service.getView();
	const ids = [...sessions.sessions.map((s) => s.sessionId)];
	for (const archive of Object.values(view.state.sessions)) ids.push(...Object.keys(archive.nodes), ...Object.keys(archive.summaries));
	for (const id of ids.sort()) {
		out.push(await service.read({ id }));
		out.push(await service.read({ id, offset: 10, limit: 30, childrenOffset: 1 }).catch((e: Error) => e.message));
	}
	return out;
}

describe("a workspace copied to another machine", () => {
	it("answers sessions, search and read identically without any native session file, and finishes pending summaries there (summary worker, faux model)", async () => {
		const ws = await setup();
		const original = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.natives], agentDir: ws.agentDir });
		const report = await original.ingest();
		const made = await readyEveryOther(
			original,
			report.sessions.map((s) => s.sessionId),
		);
		expect(made.length).toBeGreaterThan(3);

		// Another machine: the workspace (with .pi/pbot/history) at another path, Pi's agent dir empty.
		const elsewhere = join(ws.root, "machine-2", "home", "renamed project");
		const emptyAgent = join(ws.root, "machine-2", "agent");
		await mkdir(emptyAgent, { recursive: true });
		await cp(join(ws.workspace, PBOT_DIR), join(elsewhere, PBOT_DIR), { recursive: true });
		const copy = openWorkspaceHistory({ workspace: elsewhere, agentDir: emptyAgent });
		const copyReport = await copy.ingest();
		expect(copyReport.sessions).toEqual([]);

		expect(await answers(copy)).toEqual(await answers(original));

		// Pending summaries are still pending there, and can be finished there.
		const archives = await archivesOf(elsewhere);
		const pending = Object.values(archives).flatMap((a) => Object.values(a.summaries).filter((s) => s.status === "pending"));
		expect(pending.length).toBeGreaterThan(0);
		for (const s of pending) expect((await copy.read({ id: s.id })).ready).toBe(false);
		const target = { state: () => copy.archiveState(), applyEvents: (events: readonly HistoryEvent[]) => copy.applyEvents(events) };
		const pass = await runSummaryPass(target, fauxSummaryModel("machine-2"), new AbortController().signal);
		expect(pass.made).toBe(pending.length);
		const reopened = openWorkspaceHistory({ workspace: elsewhere, agentDir: emptyAgent });
		for (const s of pending) expect(await reopened.read({ id: s.id })).toMatchObject({ ready: true });
		for (const id of made) expect((await reopened.read({ id })).ready).toBe(true);
	});

	it("reuses nodes and summaries when the same native session is found in another folder", async () => {
		const ws = await setup();
		const first = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.natives], agentDir: ws.agentDir });
		const report = await first.ingest();
		await readyEveryOther(
			first,
			report.sessions.map((s) => s.sessionId),
		);
		const stored = await archiveTexts(ws.workspace);

		const moved = join(ws.root, "somewhere else", "sessions");
		await mkdir(join(moved, ".."), { recursive: true });
		await rename(ws.natives, moved);
		const again = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [moved], agentDir: ws.agentDir });
		const second = await again.ingest();
		expect(second.sessions.map((s) => s.sessionId).sort()).toEqual(report.sessions.map((s) => s.sessionId).sort());
		expect(second.sessions.filter((s) => s.written)).toEqual([]);
		expect(await archiveTexts(ws.workspace)).toEqual(stored);

		// And on the copied workspace, with the natives in yet another folder: same ids, summaries kept.
		const elsewhere = join(ws.root, "machine-2", "project");
		await cp(join(ws.workspace, PBOT_DIR), join(elsewhere, PBOT_DIR), { recursive: true });
		const third = await openWorkspaceHistory({ workspace: elsewhere, sessionDirs: [moved], agentDir: ws.agentDir }).ingest();
		expect(third.sessions.filter((s) => s.written)).toEqual([]);
		expect(await archiveTexts(elsewhere)).toEqual(stored);
	});
});
