import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import type { MigrationReport } from "../../src/integrations/pi/history/workspaceMigration.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { ARCHIVE_FORMAT } from "../../src/services/history/projections/archive.ts";
import { archivePath, migrateOldArchives, oldHistoryDir, writeArchive } from "../../src/storage/history-files/index.ts";
import { fixtureArchive, fixturePath } from "../helpers/fixtures.ts";
import { hashTree } from "../helpers/workspace.ts";
import { archivesOf, archiveTexts, nativeWorkspace, readyEvent, type NativeWorkspace } from "./helpers.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

/** A fixture's archive with its first summaries made ready, as an older pbot would have stored it. */
async function oldArchive(key: string, text: string): Promise<SessionArchive> {
	const archive = await fixtureArchive(key);
	const summaries = Object.fromEntries(
		Object.values(archive.summaries).map((s, i) => {
			if (i > 0) return [s.id, s];
			const e = readyEvent(s.sessionId, s.id);
			return [s.id, { ...s, status: "ready", text, model: e.model, madeAt: e.at }];
		}),
	);
	return { ...archive, summaries };
}

interface Scene extends NativeWorkspace {
	readonly old: string;
	readonly ids: Record<string, string>;
}

/**
 * The old location holds records of this workspace found in every accepted way, one already in
 * the workspace, one of another workspace, and broken ones.
 */
async function scene(): Promise<Scene> {
	const ws = await nativeWorkspace();
	cleanups.push(ws.cleanup);
	const old = oldHistoryDir(ws.agentDir);
	await mkdir(old, { recursive: true });
	const ids: Record<string, string> = {};
	const put = async (name: string, value: unknown) => {
		await mkdir(join(old, name, ".."), { recursive: true });
		await writeFile(join(old, name), typeof value === "string" ? value : JSON.stringify(value, null, 2));
	};
	const dropNative = (key: string) => rm(join(ws.natives, basename(fixturePath(key))));

	// By session id: its native file is discovered; the recorded path is another machine's.
	const byId = await oldArchive("tools-thinking", "OLD: greeting script summary");
	ids.byId = byId.session.sessionId;
	await put(`${ids.byId}.json`, { ...byId, file: `/Users/someone/.pi/agent/sessions/--x--/${basename(fixturePath("tools-thinking"))}` });

	// By recorded cwd inside the workspace; no native file any more.
	const byCwd = await oldArchive("steer-followup-abort", "OLD: build summary");
	ids.byCwd = byCwd.session.sessionId;
	await dropNative("steer-followup-abort");
	await put(`${ids.byCwd}.json`, { ...byCwd, session: { ...byCwd.session, cwd: join(ws.workspace, "packages", "app") } });

	// By legacy file path in Pi's native session folder of the workspace; no native file any more.
	const byFile = await oldArchive("shared-prefix-branches", "OLD: branches summary");
	ids.byFile = byFile.session.sessionId;
	await dropNative("shared-prefix-branches");
	await put(`${ids.byFile}.json`, { ...byFile, file: join(nativeSessionDir(ws.workspace, ws.agentDir), `x_${ids.byFile}.jsonl`) });

	// The loosest older shape: no format or version, the id at the top, a `workspace` field, one
	// broken Q&A among good ones.
	const loose = await oldArchive("compaction", "OLD: compaction summary");
	ids.loose = loose.session.sessionId;
	await dropNative("compaction");
	const { format: _f, version: _v, ...rest } = loose;
	const brokenNodes = { ...loose.nodes, qa_broken: { id: "qa_broken", parts: "not a list" } };
	await put(`${ids.loose}.json`, { ...rest, sessionId: ids.loose, workspace: ws.workspace, nodes: brokenNodes, rejections: { count: "many", lines: "none" } });

	// In a sub-folder named as Pi names the workspace's session folder; nothing else says where it belongs.
	const inFolder = await oldArchive("unicode-image", "OLD: unicode summary");
	ids.inFolder = inFolder.session.sessionId;
	await dropNative("unicode-image");
	await put(join(basename(nativeSessionDir(ws.workspace, ws.agentDir)), `${ids.inFolder}.json`), inFolder);

	// Already in the workspace: the workspace's copy stays as it is.
	const present = await oldArchive("error-reply", "OLD: must not replace the workspace's copy");
	ids.present = present.session.sessionId;
	await writeArchive(ws.workspace, await fixtureArchive("error-reply"));
	await put(`${ids.present}.json`, { ...present, cwd: ws.workspace });

	// Another workspace's record.
	const other = await oldArchive("tree-branches", "OLD: another project");
	ids.other = other.session.sessionId;
	await dropNative("tree-branches");
	await put(`${ids.other}.json`, { ...other, cwd: "/home/dev/another-project" });

	// Broken records.
	await put("0190ffff-garbage.json", "{ oops");
	await put("escape.json", { ...byCwd, session: { ...byCwd.session, sessionId: "../../../escape", cwd: ws.workspace } });
	return { ...ws, old, ids };
}

function openScene(s: Scene, onMigration?: (r: MigrationReport | undefined, e?: Error) => void) {
	return openWorkspaceHistory({ workspace: s.workspace, sessionDirs: [s.natives], agentDir: s.agentDir, ...(onMigration ? { onMigration } : {}) });
}

describe("migration from the old location", () => {
	it("copies the workspace's missing records on load, without paths, and loads them", async () => {
		const s = await scene();
		const presentBefore = await readFile(archivePath(s.workspace, s.ids.present!), "utf8");
		const reports: (MigrationReport | undefined)[] = [];
		const service = openScene(s, (r, e) => {
			if (e) throw e;
			reports.push(r);
		});
		const listed = await service.sessions({ limit: 50 });

		expect(reports).toHaveLength(1);
		const report = reports[0]!;
		expect([...report.copied].sort()).toEqual([s.ids.byId, s.ids.byCwd, s.ids.byFile, s.ids.loose, s.ids.inFolder].sort());
		expect(report.alreadyPresent).toEqual([s.ids.present]);
		expect(report.otherWorkspaces).toBe(1);
		expect(report.problems).toHaveLength(2);
		expect(report.problems.join("\n")).toMatch(/0190ffff-garbage\.json: /);
		expect(report.problems.join("\n")).toMatch(/escape\.json: session id "\.\.\/\.\.\/\.\.\/escape" is not a valid id/);

		const archives = await archivesOf(s.workspace);
		expect(archives[s.ids.other!]).toBeUndefined();
		expect(await readFile(archivePath(s.workspace, s.ids.present!), "utf8")).toBe(presentBefore);
		// Copied records keep their summaries' texts, also once their native file is ingested again.
		for (const [key, text] of [
			["byId", "OLD: greeting script summary"],
			["byCwd", "OLD: build summary"],
			["byFile", "OLD: branches summary"],
			["loose", "OLD: compaction summary"],
			["inFolder", "OLD: unicode summary"],
		] as const) {
			const archive = archives[s.ids[key]!]!;
			expect(archive.format, key).toBe(ARCHIVE_FORMAT);
			expect(
				Object.values(archive.summaries)
					.filter((x) => x.status === "ready")
					.map((x) => x.text),
				key,
			).toEqual([text]);
		}
		// The loose record lost its broken Q&A and kept the others.
		const compaction = await fixtureArchive("compaction");
		expect(Object.keys(archives[s.ids.loose!]!.nodes).sort()).toEqual(Object.keys(compaction.nodes).sort());
		expect(archives[s.ids.loose!]!.rejections).toEqual({ count: 0, lines: [] });
		// Sessions whose native file is gone are listed and readable from the copied record alone.
		expect(listed.sessions.map((x) => x.sessionId)).toEqual(expect.arrayContaining([s.ids.byCwd, s.ids.byFile, s.ids.loose, s.ids.inFolder]));
		const hits = await service.search({ query: "OLD: build summary" });
		expect(JSON.stringify(hits)).toContain(s.ids.byCwd);

		for (const text of Object.values(await archiveTexts(s.workspace))) {
			expect(text).not.toMatch(/"(file|cwd|workspace|parentSession)"\s*:/);
			expect(text).not.toContain(s.root);
			expect(text).not.toContain(homedir());
			expect(text).not.toContain("/Users/someone");
		}
	});

	it("keeps the old copies and the native files byte-identical, writes nothing outside .pi/pbot, and copies nothing twice", async () => {
		const s = await scene();
		const before = await hashTree(s.root);
		await openScene(s).sessions();
		const after = await hashTree(s.root);
		for (const [name, hash] of Object.entries(before)) {
			if (name.startsWith(`${join("/my project", ".pi", "pbot")}/`)) continue;
			expect(after[name], name).toBe(hash);
		}
		for (const name of Object.keys(after).filter((n) => !(n in before))) expect(name.startsWith(`${join("/my project", ".pi", "pbot")}/`), name).toBe(true);

		const texts = await archiveTexts(s.workspace);
		const again = await migrateOldArchives({
			workspace: s.workspace,
			agentDir: s.agentDir,
			sessionIds: Object.values(s.ids).filter((id) => id !== s.ids.other),
		});
		expect(again.copied).toEqual([]);
		expect(again.alreadyPresent).toHaveLength(6);
		expect(await archiveTexts(s.workspace)).toEqual(texts);
	});

	it("does nothing when there is no old location", async () => {
		const ws = await nativeWorkspace();
		cleanups.push(ws.cleanup);
		const report = await migrateOldArchives({ workspace: ws.workspace, agentDir: ws.agentDir });
		expect(report).toEqual({ copied: [], alreadyPresent: [], otherWorkspaces: 0, problems: [] });
	});
});
