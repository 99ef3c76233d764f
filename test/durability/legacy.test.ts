import { readdir, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { archivePath, readArchive } from "../../src/storage/history-files/index.ts";
import { archivesOf, archiveTexts, readyEveryOther, useNativeWorkspaces } from "./helpers.ts";

/** A fresh workspace of real Pi sessions per call, removed after each test. */
const setup = useNativeWorkspaces();

const OLD_FILE = (id: string) => `${homedir()}/.pi/agent/sessions/--home-dev-acme-app--/2026-03-01T09-00-00-001Z_${id}.jsonl`;

/** Puts the old path fields back into every archive of the workspace, as an earlier pbot wrote them. */
async function addLegacyFields(workspace: string, parentPath?: string): Promise<void> {
	for (const [id, archive] of Object.entries(await archivesOf(workspace))) {
		const legacy = {
			format: archive.format,
			version: archive.version,
			file: OLD_FILE(id),
			session: { ...archive.session, cwd: "/home/dev/acme-app", ...(parentPath && !archive.session.parentSessionId ? { parentSession: parentPath } : {}) },
			nodes: archive.nodes,
			summaries: archive.summaries,
			branches: archive.branches,
			rejections: archive.rejections,
		};
		await writeFile(archivePath(workspace, id), JSON.stringify(legacy, null, 1));
	}
}

describe("legacy file field removal", () => {
	it("rewrites every archive without its path fields on load, keeping Q&A, summaries and ids, with or without the native file", async () => {
		const { workspace, natives, agentDir } = await setup();
		const first = openWorkspaceHistory({ workspace, sessionDirs: [natives], agentDir });
		const report = await first.ingest();
		await readyEveryOther(
			first,
			report.sessions.map((s) => s.sessionId),
		);
		const clean = await archivesOf(workspace);
		expect(Object.values(clean).some((a) => Object.values(a.summaries).some((s) => s.status === "ready"))).toBe(true);
		await addLegacyFields(workspace);

		// Half of the native files are gone.
		const files = (await readdir(natives)).sort();
		for (const name of files.filter((_, i) => i % 2 === 0)) await rm(join(natives, name));

		const service = openWorkspaceHistory({ workspace, sessionDirs: [natives], agentDir });
		await service.sessions();
		const after = await archivesOf(workspace);
		for (const [id, archive] of Object.entries(after)) {
			expect(archive, id).toEqual(clean[id]);
		}
		for (const text of Object.values(await archiveTexts(workspace))) {
			expect(text).not.toMatch(/"(file|cwd|parentSession)"\s*:/);
			expect(text).not.toContain(homedir());
			expect(text).not.toContain("/home/dev/acme-app");
		}
	});

	it("cleans archives whose native session files are all gone (nothing discovered at all)", async () => {
		const { workspace, natives, agentDir } = await setup();
		await openWorkspaceHistory({ workspace, sessionDirs: [natives], agentDir }).ingest();
		const clean = await archivesOf(workspace);
		await addLegacyFields(workspace, OLD_FILE("019c0000-0000-7000-8000-00000000abcd"));
		await rm(natives, { recursive: true });

		const service = openWorkspaceHistory({ workspace, agentDir });
		const listed = await service.sessions();
		expect(listed.sessions.length).toBe(Object.keys(clean).length);
		for (const [id, text] of Object.entries(await archiveTexts(workspace))) {
			expect(text, id).not.toContain('"file"');
			const archive = JSON.parse(text);
			const before = clean[id.slice(0, -5)]!;
			expect(Object.keys(archive.nodes)).toEqual(Object.keys(before.nodes));
			expect(archive.summaries).toEqual(before.summaries);
			expect(archive.branches).toEqual(before.branches);
			// A parent named by its path keeps only its id, the one part of it an archive may hold.
			expect(archive.session.parentSessionId).toBe(before.session.parentSessionId ?? "019c0000-0000-7000-8000-00000000abcd");
			expect(text).not.toContain("/home/");
		}
	});

	it("reads an archive with a legacy field as if it had none, before it is rewritten", async () => {
		const { workspace, natives, agentDir } = await setup();
		const report = await openWorkspaceHistory({ workspace, sessionDirs: [natives], agentDir }).ingest();
		const id = report.sessions[0]!.sessionId;
		const clean = await readArchive(workspace, id);
		await addLegacyFields(workspace);
		const read = await readArchive(workspace, id);
		expect(read!.nodes).toEqual(clean!.nodes);
		expect(JSON.stringify(read)).not.toContain("/home/");
	});
});
