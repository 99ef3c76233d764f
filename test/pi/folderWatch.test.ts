/**
 * Inside Pi a later refresh looks only at the session files the operating system reported changed
 * (`FolderWatch`), not at every file of the folder; what it cannot vouch for (a new file, a file
 * gone, a folder made since, a closed watch) sends it back to a full discovery. Nothing written
 * before a query is missed: the answers are those of a full refresh.
 */
import { appendFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileDiscovery, nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { FolderWatch } from "../../src/integrations/pi/history/folderWatch.ts";
import { createWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SearchResult } from "../../src/services/history/query/types.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";
import { type PiHarness, startPi } from "../helpers/pi.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

const SESSIONS = 6;
const watches: FolderWatch[] = [];
const roots: string[] = [];
let pi: PiHarness | undefined;
afterEach(async () => {
	await pi?.dispose();
	pi = undefined;
	for (const w of watches.splice(0)) w.close();
	for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

async function setup() {
	const made = await generatedWorkspace("pbot-watch-");
	roots.push(made.workspace);
	for (let i = 0; i < SESSIONS; i++) await made.write(500 + i, { profile: "chat", targetBytes: 8_000, targetQa: 3, startMs: Date.UTC(2025, 6, 1 + i) });
	const watch = new FolderWatch();
	watches.push(watch);
	const discovery = fileDiscovery({ workspace: made.workspace, sessionDirs: [made.sessions], watch });
	const service = createWorkspaceHistory({ workspace: made.workspace, agentDir: made.agentDir, discovery, migrate: false });
	return { ...made, watch, discovery, service };
}

/** A session file's name and its last entry's id (to append a Q&A under it). */
async function lastOf(sessions: string): Promise<{ file: string; lastId: string }> {
	const name = (await readdir(sessions)).sort()[0] as string;
	const file = join(sessions, name);
	const lines = (await readFile(file, "utf8")).trim().split("\n");
	return { file, lastId: (JSON.parse(lines.at(-1) as string) as { id: string }).id };
}

describe("a refresh with a watched session folder", () => {
	it("looks at no file when nothing changed, and only at the file that grew", async () => {
		const { sessions, discovery, service } = await setup();
		const first = await service.refresh();
		expect(first.sessions).toHaveLength(SESSIONS);

		const quiet = await service.refresh();
		expect(quiet.unchangedFiles).toBe(0); // a full refresh looks at all of them (and finds them unchanged)
		expect(quiet.sessions).toEqual([]);

		const { file, lastId } = await lastOf(sessions);
		await appendFile(file, jsonl([user("w-u1", lastId, "Where did the watched ibis go?"), reply("w-a1", "w-u1", "North.")]));
		expect((await discovery.changedSince?.())?.sources.map((s) => s.key)).toEqual([file]);
		const grown = await service.refresh();
		expect(grown.sessions).toHaveLength(1);
		expect((await service.search({ query: "ibis" })).total).toBe(1);
		// Still named until the next full discovery (a read that failed is tried again), but unchanged since: not read.
		expect((await service.refresh()).sessions).toEqual([]);
		await appendFile(file, jsonl([user("w-u2", "w-a1", "And the second ibis?"), reply("w-a2", "w-u2", "South.")]));
		expect((await service.refresh()).sessions).toHaveLength(1);
		expect((await service.search({ query: "ibis" })).total).toBe(2);
	});

	it("discovers in full after a new file, a file gone, or a closed watch, and misses nothing", async () => {
		const { workspace, sessions, agentDir, watch, service } = await setup();
		await service.refresh();

		// Another Pi writes a new session.
		const id = "0195aaaa-0000-7000-8000-00000000beef";
		await writeFile(
			join(sessions, `2025-08-01T00-00-00-000Z_${id}.jsonl`),
			jsonl([header(id, { cwd: workspace }), user("n-u1", null, "Which pelican won?"), reply("n-a1", "n-u1", "The grey one.")]),
		);
		const fresh = await service.refresh();
		expect(fresh.sessions.map((s) => s.sessionId)).toEqual([id]);
		expect(fresh.unchangedFiles).toBe(SESSIONS); // a full discovery
		expect((await service.search({ query: "pelican won" })).total).toBe(1);

		// A file gone: a full discovery again (its archive stays, as with any refresh).
		await rm(join(sessions, `2025-08-01T00-00-00-000Z_${id}.jsonl`));
		expect((await service.refresh()).unchangedFiles).toBe(SESSIONS);
		expect((await service.refresh()).unchangedFiles).toBe(0);

		watch.close();
		expect((await service.refresh()).unchangedFiles).toBe(SESSIONS);

		// A folder that did not exist when it was looked at, made since.
		const later = join(workspace, "later-sessions");
		const w2 = new FolderWatch();
		watches.push(w2);
		const d2 = fileDiscovery({ workspace, sessionDirs: [sessions, later], watch: w2 });
		const s2 = createWorkspaceHistory({ workspace, agentDir, discovery: d2, migrate: false });
		await s2.refresh();
		expect(await d2.changedSince?.()).toEqual({ sources: [], warnings: [] });
		await mkdir(later);
		expect(await d2.changedSince?.()).toBeUndefined();
	});
});

describe("inside Pi", () => {
	it("a search finds what another Pi wrote in the session folder since the last one", async () => {
		pi = await startPi();
		const h = pi;
		const tool = h.session.extensionRunner?.getToolDefinition("pbot_history");
		const ctx = h.session.extensionRunner?.createContext();
		if (!tool || !ctx) throw new Error("no pbot_history tool");
		const search = async (query: string) =>
			((await tool.execute("t", { action: "search", query } as never, undefined, undefined, ctx)).details as { total: number }).total;
		await h.runtime.settled();
		expect(await search("cormorant")).toBe(0);

		// A second Pi in the same workspace writes a session of its own.
		const folder = nativeSessionDir(h.workspace, h.agentDir);
		await mkdir(folder, { recursive: true });
		const id = "0195bbbb-0000-7000-8000-00000000cafe";
		const file = join(folder, `2025-09-01T00-00-00-000Z_${id}.jsonl`);
		await writeFile(file, jsonl([header(id, { cwd: h.workspace }), user("c-u1", null, "Where do cormorants nest?"), reply("c-a1", "c-u1", "On cliffs.")]));
		expect(await search("cormorant")).toBe(1);
		// … and goes on writing it.
		await appendFile(file, jsonl([user("c-u2", "c-a1", "And the cormorant chicks?"), reply("c-a2", "c-u2", "They stay a while.")]));
		expect(await search("cormorant")).toBe(2);
		expect(await search("cormorant chicks")).toBe(1);
	});

	it("extracts again, in the same query, a session whose archive a query found damaged (its session file unchanged)", async () => {
		const { workspace, sessions, service } = await setup();
		const { file, lastId } = await lastOf(sessions);
		await appendFile(file, jsonl([user("d-u1", lastId, "Where do the avocets nest?"), reply("d-a1", "d-u1", "On the salt flats.")]));
		await service.refresh();
		expect((await service.search({ query: "avocets" })).total).toBe(1);
		const id = (JSON.parse((await readFile(file, "utf8")).split("\n")[0] as string) as { id: string }).id;
		// Cut short by hand while Pi runs: the next query reads it (its revision changed), finds it
		// damaged, moves it aside, and answers with the session extracted again.
		const archive = join(historyDir(workspace), `${id}.json`);
		await writeFile(archive, (await readFile(archive, "utf8")).slice(0, 200));
		const found = (await service.search({ query: "avocets" })) as SearchResult;
		expect(found.total).toBe(1);
		expect(service.takeWarnings().join("\n")).toMatch(/is not valid JSON.*extracted again/);
		const node = found.groups[0]?.hits[0]?.id as string;
		expect((await service.read({ id: node })).body).toContain("avocets");
		expect((await readdir(historyDir(workspace))).some((n) => n.startsWith(`${id}.json.damaged-`))).toBe(true);
	});
});
