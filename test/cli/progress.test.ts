/**
 * Long work shows its progress on a terminal: a new workspace's first query reads every session
 * file (seconds over hundreds of them), and had said nothing until its answer. The process's io
 * writes it to stderr only when that is a terminal (`CliIo.status`); a pipe gets none.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type CliIo } from "../../src/cli/main.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
	for (const c of cleanups) await c();
});

describe("progress on a terminal", () => {
	it("a first query and a rebuild show how far they are, and clear the line when done; a query with nothing to read shows nothing", async () => {
		const ws = await fixtureWorkspace("pbot-progress-");
		cleanups.push(ws.cleanup);
		await mkdir(join(ws.root, "agent"));
		const where = ["-w", ws.workspace, "-s", ws.sessions, "--agent-dir", join(ws.root, "agent")];
		const run = async (argv: string[]) => {
			const shown: (string | undefined)[] = [];
			let stdout = "";
			const io: CliIo = { stdout: (t) => void (stdout += t), stderr: () => undefined, cwd: ws.workspace, status: (t) => void shown.push(t) };
			expect(await runCli(argv, io)).toBe(0);
			return { shown, stdout };
		};
		const first = await run(["search", "the", "--json", ...where]);
		expect(first.shown[0]).toBe("pbot: reading sessions 0/18");
		for (const t of first.shown) if (t !== undefined) expect(t).toMatch(/^pbot: (reading sessions|making search text) \d+\/\d+$/);
		expect(first.shown.at(-1)).toBeUndefined();
		// The answer is the same JSON as without a terminal: progress never goes to stdout.
		expect(JSON.parse(first.stdout).total).toBeGreaterThan(0);

		const again = await run(["search", "the", ...where]);
		expect(again.shown).toEqual([]);

		const rebuilt = await run(["rebuild", ...where]);
		expect(rebuilt.shown.some((t) => t?.startsWith("pbot: reading sessions"))).toBe(true);
		expect(rebuilt.shown.at(-1)).toBeUndefined();
	});
});
