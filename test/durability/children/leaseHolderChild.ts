/**
 * A pbot process that ingests a workspace (as `pbot-history ingest` does: the workspace's history,
 * its ingest lease included) and stops after its first file until its parent says go: prints
 * `holding` then, and waits for the file `<go>` to appear; prints `read <n>` at the end.
 *   node --import tsx leaseHolderChild.ts <workspace> <sessionsDir> <agentDir> <go>
 */
import { existsSync } from "node:fs";
import { openWorkspaceHistory } from "../../../src/integrations/pi/history/workspaceHistory.ts";

const [workspace, sessions, agentDir, go] = process.argv.slice(2) as [string, string, string, string];
const pause = new Int32Array(new SharedArrayBuffer(4));
let held = false;
const service = openWorkspaceHistory({
	workspace,
	sessionDirs: [sessions],
	agentDir,
	migrate: false,
	progress: (work, done) => {
		if (work !== "sessions" || done !== 1 || held) return;
		held = true;
		process.stdout.write("holding\n");
		// The progress listener is synchronous: the run waits here, in the middle of its files, lease held.
		while (!existsSync(go)) Atomics.wait(pause, 0, 0, 10);
	},
});
const report = await service.refresh({ checkArchives: true });
process.stdout.write(`read ${report.sessions.length}\n`);
