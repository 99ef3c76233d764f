/**
 * An ingest holds no archive it does not need: a cold ingest writes each archive and lets it go, a
 * refresh reads only the archives of files that changed, a live update applies to the stored
 * archive — and everything a loaded service would have is on disk and in the view once loaded.
 */
import { appendFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import type { ArchiveStore } from "../../src/services/history/service/ports.ts";
import { memoryCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { memoryArchiveStore } from "../../src/storage/history-files/index.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";
import { fixtureSessionId } from "../query/helpers.ts";

const cleanups: (() => Promise<void>)[] = [];
/** The fixture session that two others (a fork and a clone) name as their parent. */
const FORK_SOURCE = fixtureSessionId("fork-source");
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

/** A memory store that counts which archives were read. */
function countingStore(): ArchiveStore & { readonly reads: string[]; all(): Promise<Record<string, SessionArchive>> } {
	const inner = memoryArchiveStore();
	const reads: string[] = [];
	return {
		reads,
		list: () => inner.list(),
		read: (id) => {
			reads.push(id);
			return inner.read(id);
		},
		write: (a) => inner.write(a),
		// (A glance at an archive's first bytes, as the workspace store takes it: not a read of the archive.)
		parentOf: (id) => inner.parentOf?.(id) ?? Promise.resolve(undefined),
		async all() {
			const out: Record<string, SessionArchive> = {};
			for (const id of await inner.list()) out[id] = (await inner.read(id)) as SessionArchive;
			return out;
		},
	};
}

async function setup() {
	const ws = await fixtureWorkspace("pbot-lean-");
	cleanups.push(ws.cleanup);
	const store = countingStore();
	const checkpoints = memoryCheckpointStore();
	const open = () => new HistoryService({ store, discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }), checkpoints });
	return { ...ws, store, open };
}

/** What a service that loaded everything first ends with, on its own store. */
async function loadedReference(sessions: string, workspace: string): Promise<Record<string, SessionArchive>> {
	const service = new HistoryService({ store: memoryArchiveStore(), discovery: fileDiscovery({ workspace, sessionDirs: [sessions] }) });
	await service.load();
	await service.ingest();
	return { ...service.archiveState().sessions };
}

describe("an ingest that holds only what it needs", () => {
	it("writes every archive of a cold ingest and keeps none of them in memory", async () => {
		const { store, open, sessions, workspace } = await setup();
		const service = open();
		const report = await service.ingest();
		expect(report.sessions.length).toBeGreaterThan(10);
		expect(service.isLoaded).toBe(false);
		expect(service.sessionsInMemory).toBe(0);
		// The one archive read back: the fork source, written before its forks named it as their
		// parent, made again with fork-copy keys by the ingest's closing catch-up.
		expect(store.reads).toEqual([FORK_SOURCE]);
		store.reads.length = 0;
		expect(() => service.archiveState()).toThrow(/load\(\) the archives first/);
		expect(await store.all()).toEqual(await loadedReference(sessions, workspace));

		// A query scans the text projection: it shows hits without reading any archive.
		const hits = await service.search({ query: "the", limit: 2 });
		expect(hits.total).toBeGreaterThan(2);
		expect(service.isLoaded).toBe(false);
		expect(service.sessionsInMemory).toBe(0);
		expect(store.reads).toEqual([]);
		// `read` reads the one archive of its node.
		const id = hits.kind === "hits" ? (hits.groups[0]?.hits[0]?.id as string) : "";
		const sessionId = hits.kind === "hits" ? (hits.groups[0]?.hits[0]?.sessionId as string) : "";
		expect((await service.read({ id })).id).toBe(id);
		expect(store.reads).toEqual([sessionId]);
	});

	it("reads only the archive of the file that changed, and updates it as a loaded service would", async () => {
		const { store, open, sessions, workspace } = await setup();
		await open().ingest();
		const name = (await readdir(sessions)).filter((n) => n.endsWith(".jsonl") && n.includes("_")).sort()[0] as string;
		const sessionId = /_([0-9a-f-]+)\.jsonl$/.exec(name)?.[1] as string;
		await appendFile(
			join(sessions, name),
			`${JSON.stringify({ type: "session_info", id: "zz000001", parentId: null, timestamp: "2026-05-01T00:00:00.000Z", name: "renamed later" })}\n`,
		);

		const second = open();
		store.reads.length = 0;
		const report = await second.refresh();
		expect(report.sessions.map((s) => s.sessionId)).toEqual([sessionId]);
		expect(store.reads).toEqual([sessionId]);
		expect(second.sessionsInMemory).toBe(0);
		const stored = await store.all();
		expect(stored[sessionId]?.session.name).toBe("renamed later");
		expect(stored).toEqual(await loadedReference(sessions, workspace));
	});

	it("applies a live update of an unloaded service to the stored archive, not to an empty one", async () => {
		const { store, open } = await setup();
		await open().ingest();
		const before = await store.all();
		const [sessionId, archive] = Object.entries(before).find(([, a]) => Object.values(a.summaries).some((s) => s.status === "pending")) as [
			string,
			SessionArchive,
		];
		const pending = Object.values(archive.summaries).find((s) => s.status === "pending")!;

		const service = open();
		await service.applyEvents([
			{ type: "SummaryReady", sessionId, id: pending.id, text: "A summary made elsewhere.", model: "faux/faux-1", at: "2026-04-01T00:00:00.000Z" },
		]);
		const after = (await store.all())[sessionId] as SessionArchive;
		expect(after.nodes).toEqual(archive.nodes);
		expect(after.branches).toEqual(archive.branches);
		expect(after.summaries[pending.id]).toMatchObject({ status: "ready", text: "A summary made elsewhere." });
		expect(Object.keys(after.summaries).sort()).toEqual(Object.keys(archive.summaries).sort());

		await service.load();
		expect(service.getArchive(sessionId)).toEqual(after);
	});

	it("loads everything an ingest running at the same time writes (a query during Pi's background ingest)", async () => {
		const ws = await fixtureWorkspace("pbot-lean-race-");
		cleanups.push(ws.cleanup);
		const inner = countingStore();
		let firstWrite: () => void = () => undefined;
		const writing = new Promise<void>((resolve) => (firstWrite = resolve));
		// Slow writes: the ingest is still writing (and letting archives go) while the load reads.
		const store: ArchiveStore = {
			...inner,
			write: async (a, o) => {
				firstWrite();
				await new Promise((r) => setTimeout(r, 5));
				await inner.write(a, o);
			},
		};
		const service = new HistoryService({
			store,
			discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }),
			checkpoints: memoryCheckpointStore(),
		});
		const ingest = service.refresh();
		await writing;
		await Promise.all([ingest, service.load()]);
		expect(Object.keys(service.archiveState().sessions).sort()).toEqual(Object.keys(await inner.all()).sort());
		expect(service.archiveState().sessions).toEqual(await inner.all());
		// And a refresh after it finds nothing to read, yet the view has every session.
		expect((await service.refresh()).sessions).toEqual([]);
		expect((await service.sessions({ limit: 50 })).total).toBe(Object.keys(await inner.all()).length);
	});

	it("keeps no stale copy when a load reads archives an ingest is updating at the same time", async () => {
		const ws = await fixtureWorkspace("pbot-lean-race2-");
		cleanups.push(ws.cleanup);
		const inner = countingStore();
		const checkpoints = memoryCheckpointStore();
		const discovery = fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] });
		await new HistoryService({ store: inner, discovery, checkpoints }).ingest();
		const names = (await readdir(ws.sessions)).filter((n) => n.endsWith(".jsonl") && n.includes("_"));
		for (const name of names)
			await appendFile(
				join(ws.sessions, name),
				`${JSON.stringify({ type: "session_info", id: "zz000009", parentId: null, timestamp: "2026-05-01T00:00:00.000Z", name: "renamed meanwhile" })}\n`,
			);

		// Slow reads and writes: the load reads an archive, the ingest writes its update and lets it go,
		// then the load finishes.
		const slow = (ms: number) => new Promise((r) => setTimeout(r, ms));
		const store: ArchiveStore = {
			list: () => inner.list(),
			read: async (id) => {
				const archive = await inner.read(id);
				await slow(15);
				return archive;
			},
			write: async (a, o) => {
				await slow(2);
				await inner.write(a, o);
			},
		};
		const service = new HistoryService({ store, discovery, checkpoints });
		await Promise.all([service.refresh(), slow(1).then(() => service.load())]);
		const stored = await inner.all();
		for (const [id, archive] of Object.entries(stored)) expect(service.archiveState().sessions[id], id).toEqual(archive);
	});
});
