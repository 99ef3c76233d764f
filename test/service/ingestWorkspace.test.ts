import { cp, readdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { fixtureWorkspace, hashTree } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

async function setup() {
	const ws = await fixtureWorkspace();
	cleanups.push(ws.cleanup);
	return ws;
}

async function archiveTexts(workspace: string): Promise<Record<string, string>> {
	const dir = historyDir(workspace);
	const out: Record<string, string> = {};
	for (const name of (await readdir(dir)).sort()) out[name] = await readFile(join(dir, name), "utf8");
	return out;
}

describe("ingesting a workspace of real Pi sessions", () => {
	it("writes one archive per session and skips the empty file silently", async () => {
		const { workspace, sessions } = await setup();
		const report = await openWorkspaceHistory({ workspace, sessionDirs: [sessions] }).ingest();
		const files = (await readdir(sessions)).filter((n) => n.endsWith(".jsonl"));
		expect(report.sessions).toHaveLength(files.length - 1);
		expect(report.warnings).toEqual([]);
		expect(Object.keys(await archiveTexts(workspace))).toHaveLength(files.length - 1);
	});

	it("leaves every native session file byte-identical", async () => {
		const { workspace, sessions } = await setup();
		const before = await hashTree(sessions);
		const service = openWorkspaceHistory({ workspace, sessionDirs: [sessions] });
		await service.ingest();
		await service.ingest();
		expect(await hashTree(sessions)).toEqual(before);
	});

	it("stores no absolute path, no workspace path and no home directory in any archive", async () => {
		const { workspace, sessions } = await setup();
		await openWorkspaceHistory({ workspace, sessionDirs: [sessions] }).ingest();
		const texts = Object.values(await archiveTexts(workspace));
		expect(texts.length).toBeGreaterThan(10);
		for (const text of texts) {
			expect(text).not.toContain(workspace);
			expect(text).not.toContain(sessions);
			expect(text).not.toContain(homedir());
			expect(text).not.toContain("/home/dev/acme-app");
			expect(text).not.toContain("/tmp/");
			expect(text).not.toMatch(/"(cwd|file|path|parentSession)"\s*:/);
		}
	});

	it("gives identical archives after the workspace is copied to another path and ingested there", async () => {
		const { root, workspace, sessions } = await setup();
		await openWorkspaceHistory({ workspace, sessionDirs: [sessions] }).ingest();
		const moved = join(root, "elsewhere", "renamed project");
		await cp(workspace, moved, { recursive: true });
		const report = await openWorkspaceHistory({ workspace: moved, sessionDirs: [join(moved, "pi-sessions")] }).ingest();
		expect(report.sessions.every((s) => !s.written)).toBe(true);
		expect(await archiveTexts(moved)).toEqual(await archiveTexts(workspace));

		// And from scratch on the new path: the same ids and the same bytes.
		const fresh = join(root, "fresh copy");
		await cp(sessions, join(fresh, "pi-sessions"), { recursive: true });
		await openWorkspaceHistory({ workspace: fresh, sessionDirs: [join(fresh, "pi-sessions")] }).ingest();
		expect(await archiveTexts(fresh)).toEqual(await archiveTexts(workspace));
	});

	it("keeps every node id and summary when a native file is ingested again over its archive", async () => {
		const { workspace, sessions } = await setup();
		const first = openWorkspaceHistory({ workspace, sessionDirs: [sessions] });
		await first.ingest();
		const before = await archiveTexts(workspace);
		const again = openWorkspaceHistory({ workspace, sessionDirs: [sessions] });
		const report = await again.ingest();
		expect(report.sessions.filter((s) => s.written)).toEqual([]);
		expect(await archiveTexts(workspace)).toEqual(before);
	});

	it("writes nothing outside .pi/pbot of the workspace", async () => {
		const { root, workspace, sessions } = await setup();
		const before = await hashTree(root);
		await openWorkspaceHistory({ workspace, sessionDirs: [sessions] }).ingest();
		const after = await hashTree(root);
		const added = Object.keys(after).filter((k) => !(k in before));
		expect(added.length).toBeGreaterThan(0);
		for (const name of added) expect(name.startsWith(`${join("/my project", ".pi", "pbot")}/`)).toBe(true);
		for (const name of Object.keys(before)) expect(after[name]).toBe(before[name]);
	});

	it("refresh reads nothing again when no file changed", async () => {
		const { workspace, sessions } = await setup();
		const service = openWorkspaceHistory({ workspace, sessionDirs: [sessions] });
		await service.ingest();
		expect((await service.refresh()).sessions).toEqual([]);
	});
});
