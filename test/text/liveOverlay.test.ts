/**
 * A live update (Pi's tail, a summary) is searchable as soon as it is applied, before its archive
 * write lands: the session is searched as it is in memory until then, and from its projection after.
 */
import { describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import type { ArchiveStore } from "../../src/services/history/service/ports.ts";
import type { QaNode } from "../../src/services/history/model/types.ts";
import { memoryArchiveStore } from "../../src/storage/history-files/index.ts";
import { fixtureWorkspace } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

/** The first session held by `service`, and a new Q&A of it shaped like its first one, with `id` and `text`. */
function newQaOf(service: HistoryService, id: string, text: string): { readonly archive: SessionArchive; readonly node: QaNode } {
	const archive = Object.values(service.archiveState().sessions)[0] as SessionArchive;
	const model = Object.values(archive.nodes)[0] as QaNode;
	return { archive, node: { ...model, id, parts: [{ ...(model.parts[0] as QaNode["parts"][number]), text }] } };
}

describe("a live update", () => {
	it("is found by search while its archive write waits, and after it lands", async () => {
		const ws = await fixtureWorkspace(["steer-followup-abort", "fork-source"]);
		cleanups.push(ws.workspace);
		const inner = memoryArchiveStore();
		let release: () => void = () => undefined;
		let hold = false;
		const gate = () => (hold ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve());
		const store: ArchiveStore = {
			...inner,
			write: async (archive, options) => {
				await gate();
				return inner.write(archive, options);
			},
		};
		const service = new HistoryService({ store, discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }) });
		await service.ingest();
		await service.load();
		const { archive, node } = newQaOf(service, "qa_liveOverlayTest000001", "Where did the overlay flamingo go?");

		const writesBefore = inner.writes;
		hold = true;
		const applied = service.applyEvents([{ type: "QaObserved", node }]);
		await new Promise((r) => setImmediate(r));
		const during = await service.search({ query: "overlay flamingo" });
		expect(during).toMatchObject({ total: 1, groups: [{ level: 0, hits: [{ id: node.id, sessionId: archive.session.sessionId }] }] });
		expect(inner.writes).toBe(writesBefore); // the write is still waiting
		release();
		await applied;
		const after = await service.search({ query: "overlay flamingo" });
		expect(after).toEqual(during);
		// And a new process (only files and archives) finds it too.
		const fresh = new HistoryService({ store: inner, discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }) });
		expect((await fresh.search({ query: "overlay flamingo" })).total).toBe(1);
	});

	it("is found by a search asked for after it, even when a refresh was already queued before it", async () => {
		const ws = await fixtureWorkspace(["steer-followup-abort"]);
		cleanups.push(ws.workspace);
		const service = new HistoryService({ store: memoryArchiveStore(), discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }) });
		await service.ingest();
		await service.load();
		const { node } = newQaOf(service, "qa_liveOverlayTest000002", "Where did the queued heron go?");
		// Past the service's time slice: the update pauses (a turn of the loop) before its overlay.
		await new Promise((r) => setTimeout(r, 25));
		// Pi's order: a refresh queued (the end of a run) but not yet looking at the files, then the
		// tail's events (a query reads the tail first), then the query's own refresh and scan.
		const queued = service.refresh();
		const applied = service.applyEvents([{ type: "QaObserved", node }]);
		const found = await service.search({ query: "queued heron" });
		expect(found.total).toBe(1);
		await Promise.all([queued, applied]);
	});
});
