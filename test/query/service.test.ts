import { appendFile, mkdtemp, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { QueryError } from "../../src/services/history/query/errors.ts";
import { readNode, searchHistory } from "../../src/services/history/query/index.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";
import { fixtureWorkspace } from "./helpers.ts";

async function emptyWorkspace(withSessionsDir: boolean) {
	const workspace = await mkdtemp(join(tmpdir(), "pbot-empty-"));
	const sessions = join(workspace, "sessions");
	if (withSessionsDir) await mkdir(sessions);
	await mkdir(join(workspace, "agent"));
	return openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir: join(workspace, "agent") });
}

describe("HistoryService queries", () => {
	it("answers an empty list, not an error, on a workspace without sessions", async () => {
		for (const withDir of [true, false]) {
			const service = await emptyWorkspace(withDir);
			expect(await service.sessions()).toMatchObject({ kind: "sessions", sessions: [], total: 0, nextOffset: null });
			expect(await service.search({ query: "anything" })).toMatchObject({ kind: "hits", groups: [], total: 0, nextOffset: null });
			expect(await service.search({})).toMatchObject({ kind: "sessions", total: 0 });
			await expect(service.read({ id: "qa_AAAAAAAAAAAAAAAAAAAA" })).rejects.toBeInstanceOf(QueryError);
		}
	});

	it("answers what the pure functions answer on its archives, without loading the history", async () => {
		const ws = await fixtureWorkspace(["steer-followup-abort", "fork-source", "fork"]);
		const service = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir });
		const result = await service.search({ query: "version", limit: 3 });
		const sessionId = (await service.sessions()).sessions[0]?.sessionId as string;
		const read = await service.read({ id: sessionId });
		expect(service.isLoaded).toBe(false);
		await service.load();
		expect(result).toEqual(searchHistory(service.getView(), { query: "version", limit: 3 }));
		expect(read).toEqual(readNode(service.getView(), { id: sessionId }));
	});

	it("picks up a session file that grew since the last query, and rebuilds nothing when none changed", async () => {
		const workspace = await mkdtemp(join(tmpdir(), "pbot-fresh-"));
		const sessions = join(workspace, "sessions");
		await mkdir(sessions);
		const file = join(sessions, "2026-01-01T00-00-00-000Z_0190ffff-0000-7000-8000-000000000001.jsonl");
		await writeFile(file, jsonl([header("0190ffff-0000-7000-8000-000000000001"), user("u1", null, "first alpha question"), reply("a1", "u1", "alpha answer")]));
		const service = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir: join(workspace, "agent") });

		expect((await service.search({ query: "alpha" })).total).toBe(1);
		expect((await service.search({ query: "beta" })).total).toBe(0);
		expect((await service.refresh()).sessions).toEqual([]);
		expect((await service.search({ query: "alpha" })).total).toBe(1);

		await appendFile(file, jsonl([user("u2", "a1", "second beta question"), reply("a2", "u2", "beta answer")]));
		const fresh = await service.search({ query: "beta" });
		expect(fresh.total).toBe(1);
		expect((await service.sessions()).sessions[0]?.qa).toBe(2);
	});
});
