/**
 * Per-file checkpoints: a new process (here, a new service) on a workspace whose archives are
 * present and whose session files are unchanged reads no session file; anything that makes a
 * checkpoint doubtful makes the file be read again.
 */
import { execFileSync } from "node:child_process";
import { appendFile, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import type { SessionDiscovery } from "../../src/services/history/service/ports.ts";
import { CHECKPOINTS_FILE, workspaceCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { historyDir, workspaceArchiveStore } from "../../src/storage/history-files/index.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

/** A service as a new process would make it, counting the session files it reads, and those it opens for their heads. */
function newProcess(workspace: string, sessions: string): { service: HistoryService; reads: string[]; heads: string[] } {
	const reads: string[] = [];
	const heads: string[] = [];
	const inner = fileDiscovery({ workspace, sessionDirs: [sessions] });
	const discovery: SessionDiscovery = {
		async discover() {
			const found = await inner.discover();
			return {
				warnings: found.warnings,
				sources: found.sources.map((s) => ({
					...s,
					read: (onState) => {
						reads.push(s.key.split("/").pop() as string);
						return s.read(onState);
					},
					state: () => {
						heads.push(s.key.split("/").pop() as string);
						return s.state?.() ?? Promise.resolve(undefined);
					},
				})),
			};
		},
	};
	return {
		service: new HistoryService({ store: workspaceArchiveStore(workspace), discovery, checkpoints: workspaceCheckpointStore(workspace) }),
		reads,
		heads,
	};
}

async function setup() {
	const ws = await fixtureWorkspace("pbot-checkpoints-");
	cleanups.push(ws.cleanup);
	const first = newProcess(ws.workspace, ws.sessions);
	await first.service.ingest();
	const files = (await readdir(ws.sessions)).filter((n) => n.endsWith(".jsonl") && n.includes("_"));
	return { ...ws, first, files };
}

describe("checkpoints between processes", () => {
	it("lets a new process skip unchanged files on their fingerprints alone, without opening them; a copy checks heads once", async () => {
		const { workspace, sessions, root } = await setup();
		const second = newProcess(workspace, sessions);
		expect((await second.service.refresh()).unchangedFiles).toBeGreaterThan(10);
		expect(second.reads).toEqual([]);
		expect(second.heads).toEqual([]);

		// Copied elsewhere: new inodes, same contents and times. Heads are compared (nothing is
		// read), and the new fingerprints are recorded for the next process.
		const copy = join(root, "copied");
		execFileSync("cp", ["-a", workspace, copy]);
		const copiedSessions = join(copy, sessions.slice(workspace.length + 1));
		const third = newProcess(copy, copiedSessions);
		await third.service.refresh();
		expect(third.reads).toEqual([]);
		expect(third.heads.length).toBeGreaterThan(10);
		const fourth = newProcess(copy, copiedSessions);
		await fourth.service.refresh();
		expect([fourth.reads, fourth.heads]).toEqual([[], []]);
	});

	it("lets a new process refresh without reading any unchanged session file, and answer from the archives", async () => {
		const { workspace, sessions, first } = await setup();
		const second = newProcess(workspace, sessions);
		const report = await second.service.refresh();
		expect(second.reads.filter((n) => n !== "empty.jsonl" && n.includes("_"))).toEqual([]);
		expect(report.sessions).toEqual([]);
		expect(second.service.isLoaded).toBe(false);
		await Promise.all([first.service.load(), second.service.load()]);
		expect(Object.keys(second.service.archiveState().sessions).sort()).toEqual(Object.keys(first.service.archiveState().sessions).sort());
		const hits = await second.service.search({ query: "Dana Whitfield" });
		expect(hits.kind === "hits" && hits.total).toBeGreaterThan(0);
	});

	it("keeps them in .pi/pbot/checkpoints.json, keyed by session id and file name, never by path", async () => {
		const { workspace, sessions, root } = await setup();
		const text = await readFile(join(workspace, CHECKPOINTS_FILE), "utf8");
		expect(text).not.toContain(sessions);
		expect(text).not.toContain(root);
		const files = (JSON.parse(text) as { files: Record<string, unknown> }).files;
		for (const key of Object.keys(files)) expect(key).toMatch(/^[A-Za-z0-9-]*\/[^/]+\.jsonl$/);
	});

	it("reads again a file that grew, and only that one", async () => {
		const { workspace, sessions, files } = await setup();
		const grown = files[0] as string;
		await appendFile(
			join(sessions, grown),
			'{"type":"label","id":"zz000001","parentId":null,"timestamp":"2026-05-01T00:00:00.000Z","targetId":"x","label":"later"}\n',
		);
		const second = newProcess(workspace, sessions);
		await second.service.refresh();
		expect(second.reads.filter((n) => n.includes("_"))).toEqual([grown]);
	});

	it("in a long-lived process, takes the checkpoints another process saved since: a file it archived is not read again", async () => {
		const { workspace, sessions, files } = await setup();
		const piA = newProcess(workspace, sessions);
		await piA.service.refresh();
		const grown = files[0] as string;
		await appendFile(join(sessions, grown), "\n");
		// Another process reads the grown file and checkpoints it…
		const other = newProcess(workspace, sessions);
		expect((await other.service.refresh()).sessions).toHaveLength(1);
		// …so the long-lived one finds it archived as it is now, and leaves it.
		const again = await piA.service.refresh();
		expect(again.sessions).toEqual([]);
		expect(piA.reads).toEqual([]);
	});

	it("reads again a file rewritten with the same size and time, whose first bytes changed", async () => {
		const { workspace, sessions, files } = await setup();
		const file = join(sessions, files[1] as string);
		const before = await stat(file);
		const bytes = await readFile(file);
		// Same length, another entry id in the first lines, the old mtime put back.
		const text = bytes.toString("utf8");
		const at = text.indexOf('"id":"', text.indexOf("\n")) + 6;
		const changed = text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1);
		await writeFile(file, changed);
		await utimes(file, before.atime, before.mtime);
		expect((await stat(file)).size).toBe(before.size);
		const second = newProcess(workspace, sessions);
		await second.service.refresh();
		expect(second.reads).toContain(files[1]);
	});

	it("reads again a file whose archive is gone", async () => {
		const { workspace, sessions, files, first } = await setup();
		await first.service.load();
		const [sessionId] = Object.keys(first.service.archiveState().sessions).filter((id) => (files[2] as string).includes(id));
		await rm(join(historyDir(workspace), `${sessionId}.json`));
		const second = newProcess(workspace, sessions);
		await second.service.refresh();
		// Exactly the files that went into that archive (derived copies share their source's session id).
		const checkpoints = JSON.parse(await readFile(join(workspace, CHECKPOINTS_FILE), "utf8")) as { files: Record<string, { sessionId: string }> };
		const intoIt = Object.entries(checkpoints.files)
			.filter(([, c]) => c.sessionId === sessionId)
			.map(([key]) => key.split("/").pop());
		// (A file that gave no session, like Pi's not-yet-written empty file, has no checkpoint: it costs nothing to read.)
		const read = second.reads.filter((n) => n !== "empty.jsonl");
		expect(read).toContain(files[2]);
		expect(read.sort()).toEqual(intoIt.sort());
		await second.service.load();
		expect(second.service.archiveState().sessions[sessionId as string]).toBeDefined();
	});

	it("reads everything again when the checkpoint file is damaged or of another extraction version", async () => {
		const { workspace, sessions, files } = await setup();
		const file = join(workspace, CHECKPOINTS_FILE);
		await writeFile(file, "{ not json");
		const second = newProcess(workspace, sessions);
		await second.service.refresh();
		expect(second.reads.filter((n) => n.includes("_")).sort()).toEqual([...files].sort());
		const saved = JSON.parse(await readFile(file, "utf8")) as { extraction: number };
		await writeFile(file, JSON.stringify({ ...saved, extraction: saved.extraction + 1 }));
		const third = newProcess(workspace, sessions);
		await third.service.refresh();
		expect(third.reads.filter((n) => n.includes("_")).sort()).toEqual([...files].sort());
	});

	it("is wired into the workspace history the CLI opens", async () => {
		const { workspace, sessions } = await fixtureWorkspace("pbot-checkpoints-cli-");
		cleanups.push(() => rm(join(workspace, ".."), { recursive: true, force: true }));
		await openWorkspaceHistory({ workspace, sessionDirs: [sessions], migrate: false }).ingest();
		expect((await stat(join(workspace, CHECKPOINTS_FILE))).isFile()).toBe(true);
	});
});
