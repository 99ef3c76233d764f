import { mkdir, readdir, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { ArchiveError, archivePath, dropLegacyFields, historyDir, oldHistoryDir, readArchive, writeArchive } from "../../src/storage/history-files/index.ts";
import { fixtureArchive } from "../helpers/fixtures.ts";
import { hashTree } from "../helpers/workspace.ts";
import { archiveTexts, readyEveryOther, useNativeWorkspaces } from "./helpers.ts";

/** A fresh workspace of real Pi sessions per call, removed after each test. */
const setup = useNativeWorkspaces();

const BAD_IDS = ["", ".", "..", "../x", "a/b", "a\\b", "/abs", "C:", "a.json", "a b", "a\u0000b", "é", "-", "_", "x".repeat(129), "..%2f"];

describe("ids are checked before a file name is built from them", () => {
	it.each(BAD_IDS.map((id) => [JSON.stringify(id.slice(0, 20)), id]))("refuses %s with a clear error", async (_, id) => {
		const ws = await setup();
		expect(() => archivePath(ws.workspace, id)).toThrow(ArchiveError);
		expect(() => archivePath(ws.workspace, id)).toThrow(/invalid session id .*: ids are 1–128 of A–Z a–z 0–9 _ -/);
		await expect(readArchive(ws.workspace, id)).rejects.toThrow(ArchiveError);
		await expect(dropLegacyFields(ws.workspace, id)).rejects.toThrow(ArchiveError);
		const archive = await fixtureArchive("compaction");
		await expect(writeArchive(ws.workspace, { ...archive, session: { ...archive.session, sessionId: id } })).rejects.toThrow(ArchiveError);
		// Nothing was created, not even the history folder.
		expect(await readdir(ws.workspace)).toEqual([]);
	});

	it("accepts the longest id (128 characters) and Pi's UUIDs", async () => {
		const ws = await setup();
		expect(archivePath(ws.workspace, "a".repeat(128))).toBe(join(historyDir(ws.workspace), `${"a".repeat(128)}.json`));
		expect(archivePath(ws.workspace, "019cadc6-9a80-73c3-b5d6-49acf52fa165")).toMatch(/019cadc6-9a80-73c3-b5d6-49acf52fa165\.json$/);
	});

	it("skips a session file whose header names a hostile id, and writes nothing for it", async () => {
		const ws = await setup();
		const hostile = join(ws.root, "hostile");
		await mkdir(hostile);
		const lines = (id: string) =>
			`${[
				{ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: ws.workspace },
				{ type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "escape?" } },
			]
				.map((l) => JSON.stringify(l))
				.join("\n")}\n`;
		await writeFile(join(hostile, "a.jsonl"), lines("../../../outside"));
		await writeFile(join(hostile, "b.jsonl"), lines("x".repeat(500)));
		await writeFile(join(hostile, "c.jsonl"), lines("sub/dir"));
		const before = await hashTree(ws.root);
		const report = await openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [hostile], agentDir: ws.agentDir }).ingest();
		expect(report.sessions).toEqual([]);
		expect(report.warnings).toHaveLength(3);
		for (const w of report.warnings) expect(w).toMatch(/is not a valid id; file skipped/);
		expect(await hashTree(ws.root)).toEqual(before);
	});
});

describe("nothing leaks and nothing native changes", () => {
	it("writes only under .pi/pbot, leaves native and old files byte-identical, and stores no path, after every operation", async () => {
		const ws = await setup();
		// An old location with a record of this workspace, and one with a legacy field in the workspace.
		const old = oldHistoryDir(ws.agentDir);
		await mkdir(old, { recursive: true });
		const migrated = await fixtureArchive("many-qa-72");
		await writeFile(join(old, `${migrated.session.sessionId}.json`), JSON.stringify({ ...migrated, file: join(ws.natives, "gone.jsonl"), cwd: ws.workspace }));
		const legacy: SessionArchive = await fixtureArchive("fork");
		await mkdir(historyDir(ws.workspace), { recursive: true });
		await writeFile(archivePath(ws.workspace, legacy.session.sessionId), JSON.stringify({ ...legacy, file: join(ws.natives, "fork.jsonl") }));

		const pbotPrefix = `${join("/my project", ".pi", "pbot")}/`;
		let before = await hashTree(ws.root);
		const check = async (step: string) => {
			const after = await hashTree(ws.root);
			for (const [name, hash] of Object.entries(before)) if (!name.startsWith(pbotPrefix)) expect(after[name], `${step}: ${name}`).toBe(hash);
			for (const name of Object.keys(after)) if (!(name in before)) expect(name.startsWith(pbotPrefix), `${step}: ${name}`).toBe(true);
			const leftovers = (await readdir(historyDir(ws.workspace))).filter((n) => !n.endsWith(".json"));
			expect(leftovers, `${step}: lock or temporary files left`).toEqual([]);
			for (const [name, text] of Object.entries(await archiveTexts(ws.workspace))) {
				for (const path of [ws.root, ws.workspace, ws.natives, ws.agentDir, homedir(), tmpdir(), "/home/dev/acme-app", "/tmp/pbot-fixtures"]) {
					expect(text.includes(path), `${step}: ${name} contains ${path}`).toBe(false);
				}
				expect(text, `${step}: ${name}`).not.toMatch(/"(file|path|cwd|workspace|sessionFile|sessionDir|parentSession)"\s*:/);
			}
			before = after;
		};

		const open = (): HistoryService => openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.natives], agentDir: ws.agentDir });
		const service = open();
		const report = await service.ingest(); // migration, legacy cleanup, ingest
		await check("ingest");
		await service.refresh();
		await check("refresh");
		await readyEveryOther(
			service,
			report.sessions.map((s) => s.sessionId),
		);
		await check("summaries made ready");
		const pending = Object.values(service.getArchive(migrated.session.sessionId)!.summaries).find((s) => s.status === "pending")!;
		await service.applyEvents([{ type: "SummaryFailed", sessionId: pending.sessionId, id: pending.id, error: "rate limited", at: "2026-04-01T00:00:00.000Z" }]);
		await check("summary failed");
		await service.sessions();
		const hits = await service.search({ query: "the" });
		const someId = hits.kind === "hits" ? hits.groups[0]?.hits[0]?.id : undefined;
		expect(someId).toBeDefined();
		await service.read({ id: someId! });
		await check("queries");
		// A second service on the same workspace (another process would do the same).
		const second = open();
		await Promise.all([second.ingest(), readyEveryOther(service, [migrated.session.sessionId])]);
		await check("two services at once");
	});
});
