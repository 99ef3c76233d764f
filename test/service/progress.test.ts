import { rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { fixtureWorkspace, NATIVE_KEYS } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("each");

describe("progress of long work", () => {
	it("an ingest says 0 of the files to read first, then each file read; a projection made again says how far, up to all", async () => {
		const ws = await fixtureWorkspace(NATIVE_KEYS);
		cleanups.push(ws.workspace);
		const seen: string[] = [];
		const open = () =>
			openWorkspaceHistory({
				workspace: ws.workspace,
				sessionDirs: [ws.sessions],
				agentDir: ws.agentDir,
				migrate: false,
				progress: (work, done, total) => void seen.push(`${work} ${done}/${total}`),
			});
		await open().ingest();
		const files = NATIVE_KEYS.length;
		expect(seen.filter((s) => s.startsWith("sessions"))).toEqual(Array.from({ length: files + 1 }, (_, i) => `sessions ${i}/${files}`));

		// Nothing to read or make again: nothing said.
		seen.length = 0;
		await open().search({ query: "the" });
		expect(seen).toEqual([]);

		// The search text deleted: made again from the archives, with its progress.
		await rm(join(ws.workspace, ".pi", "pbot", "text"), { recursive: true });
		await open().search({ query: "the" });
		const made = seen.filter((s) => s.startsWith("search text"));
		expect(made.length).toBeGreaterThan(1);
		const last = made.at(-1) as string;
		expect(last).toMatch(/^search text (\d+)\/\1$/);
	});
});
