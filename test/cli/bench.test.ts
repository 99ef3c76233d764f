/**
 * `pbot-history bench`: the CLI runs the same benchmark runner as `npm run bench` (no timing is
 * asserted: the table comes out, with a ratio against a baseline measured in the same run).
 */
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("each");

function capture(cwd: string) {
	const out: string[] = [];
	const err: string[] = [];
	return { io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd }, out, err };
}

describe("pbot-history bench", () => {
	it("runs the cold-ingest benchmark on the tiny preset and prints its row and ratio, writing only to --data", { timeout: 120_000 }, async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-cli-bench-"));
		cleanups.push(root);
		const { io, out, err } = capture(root);
		expect(await runCli(["bench", "--preset", "tiny", "--only", "cold", "--runs", "1", "--data", "data"], io)).toBe(0);
		const text = out.join("\n");
		expect(text).toMatch(/cold ingest, tiny preset .*│ .*MB\/s.*│ .*MB\/s.*│ \d+\.\d+×/);
		expect(err.join("\n")).toMatch(/\[bench tiny\] 1\/\d+/);
		expect((await readdir(root)).sort()).toEqual(["data"]);
	});

	it("refuses an unknown preset with exit code 2 and the known ones", async () => {
		const { io, err } = capture(tmpdir());
		expect(await runCli(["bench", "--preset", "huge"], io)).toBe(2);
		expect(err.join("\n")).toMatch(/--preset: unknown preset "huge"; one of .*small.*large/);
		expect(await runCli(["bench", "--runs", "0"], io)).toBe(2);
	});
});
