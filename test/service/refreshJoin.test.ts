/**
 * A refresh asked for while another run has not yet begun looking at the session files joins that
 * run (it sees every file as it is from then on): Pi's first query during the start's ingest does
 * not discover every file again right after. One asked for once the files are being looked at gets
 * a run of its own, so nothing written before a query is missed.
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { createWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SessionDiscovery } from "../../src/services/history/service/ports.ts";
import { FIXTURES_DIR } from "../helpers/fixtures.ts";
import { fixtureFile, fixtureWorkspace, NATIVE_KEYS } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("each");

/** The files' discovery, counting its calls; `gate` (when set) holds a call, once it has listed the folders, until it is opened. */
function countingDiscovery(dir: string, workspace: string) {
	const files = fileDiscovery({ workspace, sessionDirs: [dir] });
	const state = { calls: 0, gate: undefined as Promise<void> | undefined };
	const discovery: SessionDiscovery = {
		async discover() {
			state.calls++;
			const found = await files.discover();
			// Held after the folders were listed: the files are being looked at.
			if (state.gate) await state.gate;
			return found;
		},
	};
	return { discovery, state };
}

describe("refreshes asked for during another run", () => {
	it("join a run that has not begun looking at the files, and get their own once it has", async () => {
		const ws = await fixtureWorkspace(NATIVE_KEYS.slice(0, 3));
		cleanups.push(ws.workspace);
		const { discovery, state } = countingDiscovery(ws.sessions, ws.workspace);
		const service = createWorkspaceHistory({ workspace: ws.workspace, agentDir: ws.agentDir, discovery, migrate: false });

		// Asked for together: one run.
		const [a, b] = await Promise.all([service.refresh(), service.refresh()]);
		expect(state.calls).toBe(1);
		expect(b).toBe(a);
		expect(a.sessions.length).toBe(3);

		// A refresh asked for once the files are being looked at gets a run of its own, and sees a
		// file written before it was asked for.
		let open!: () => void;
		state.gate = new Promise<void>((resolve) => (open = resolve));
		const first = service.refresh();
		while (state.calls < 2) await new Promise((r) => setTimeout(r, 1));
		// A session file written before the next refresh is asked for.
		const extra = fixtureFile(NATIVE_KEYS[3] as string);
		await copyFile(join(FIXTURES_DIR, extra), join(ws.sessions, extra));
		const second = service.refresh();
		state.gate = undefined;
		open();
		await first;
		const report = await second;
		expect(state.calls).toBe(3);
		expect(report.sessions.map((s) => s.sessionId)).toHaveLength(1);
		expect((await service.sessions({})).total).toBe(4);

		// A full ingest does not join a refresh (it reads every file), but a refresh joins a full ingest.
		const calls = state.calls;
		const [, full] = await Promise.all([service.refresh(), service.ingest()]);
		expect(state.calls).toBe(calls + 2);
		expect(full.unchangedFiles).toBe(0);
		await Promise.all([service.ingest(), service.refresh()]);
		expect(state.calls).toBe(calls + 3);
	});
});
