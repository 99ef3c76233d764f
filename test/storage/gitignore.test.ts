/**
 * History can hold pasted secrets: `.pi/pbot/` carries a `.gitignore` from the moment pbot makes
 * it, so `git add -A` in a workspace that is a repository commits none of it. Deleting that file
 * is how a person opts in; pbot does not put it back.
 */
import { execFileSync } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { PBOT_DIR } from "../../src/storage/history-files/index.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

const git = (cwd: string, ...args: string[]) =>
	execFileSync("git", args, {
		cwd,
		encoding: "utf8",
		env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
	});

describe(".pi/pbot/.gitignore", () => {
	it("is written when pbot makes .pi/pbot, and keeps every archive, projection and checkpoint out of git add -A", async () => {
		const ws = await fixtureWorkspace("pbot-gitignore-");
		cleanups.push(ws.cleanup);
		git(ws.workspace, "init", "-q");
		const open = () => openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: join(ws.root, "agent") });
		await open().ingest();
		await open().search({ query: "the" });
		const ignore = await readFile(join(ws.workspace, PBOT_DIR, ".gitignore"), "utf8");
		expect(ignore).toMatch(/^# .*secrets.*Delete this file/);
		git(ws.workspace, "add", "-A");
		const staged = git(ws.workspace, "diff", "--cached", "--name-only");
		expect(staged).toContain("pi-sessions/");
		expect(staged).not.toContain(".pi/pbot");

		// Deleted by the person: history is theirs to commit, and pbot does not undo that choice.
		await rm(join(ws.workspace, PBOT_DIR, ".gitignore"));
		await open().ingest();
		await open().search({ query: "the" });
		git(ws.workspace, "add", "-A");
		expect(git(ws.workspace, "diff", "--cached", "--name-only")).toContain(".pi/pbot/history/");
	});
});
