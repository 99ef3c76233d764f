/**
 * The benchmark runner works end to end on the tiny preset: every benchmark runs (in its own
 * process, as `npm run bench` runs them; the CLI's commands as whole processes of the sources
 * through tsx, a second or so each) and the table and the results file come out. This is the CI
 * smoke test of the bench; it asserts no timing.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_SEED } from "../../bench/generator/index.ts";
import { runBench } from "../../bench/run.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { BYTE_SEARCH_WASM } from "../../src/services/history/model/byteSearchModule.ts";

const roots: string[] = [];
afterAll(async () => {
	for (const r of roots) await rm(r, { recursive: true, force: true });
});

describe("npm run bench", () => {
	it("runs every benchmark on the tiny preset and writes a table of ratios", { timeout: 300_000 }, async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-bench-"));
		roots.push(root);
		const out = join(root, "RESULTS.md");
		const lines: string[] = [];
		const report = await runBench({ preset: "tiny", runtime: "tsx", dataDir: root, out, runs: 1, log: (l) => lines.push(l) });
		const measures = report.rows.map((r) => r.measure).join("\n");
		for (const expected of [
			"cold ingest",
			"`pbot-history ingest` as a whole process",
			"`pbot-history sessions --json` as a whole process",
			"`pbot-history read <id> --json` as a whole process",
			"`pbot-history search <q> --json` as a whole process",
			"peak RSS of a `pbot-history search` process",
			"inside Pi: the first search",
			"inside Pi: later searches",
			"inside Pi: event loop held at most (a key's wait), start and searches",
			"inside Pi: event loop held at most (a key's wait), a start remaking the search text",
			"inside Pi: event loop held at most (a key's wait), a start with no archives",
			"Pi's RSS",
			"projection built from the archives",
			"live tail",
			"peak RSS of the cold ingest",
			"single session",
		])
			expect(measures).toContain(expected);
		for (const row of report.rows) expect(["yes", "no", "—"]).toContain(row.met);
		// The heavier starts ran (a figure, not "n/a") and found what the others did.
		for (const row of report.rows.filter((r) => r.measure.includes("event loop held"))) expect(row.ours).toMatch(/\d/);
		expect(report.notes.join("\n")).not.toContain("totals differ");
		expect(report.context.some((r) => r.measure.includes("the first search after a start with no archives"))).toBe(true);
		expect(report.context.some((r) => r.measure.includes("a search right after an exchange") && /\d/.test(r.ours))).toBe(true);
		expect(report.context.some((r) => r.measure.includes("ndjson"))).toBe(true);
		// Two processes on one fresh workspace both ended well (a figure for each, not "n/a").
		expect(report.context.find((r) => r.measure.includes("into another process's cold `ingest`"))?.ours).toMatch(/^\d[\d.]* m?s \/ \d/);
		// The package as Pi loads it at every start: the bundle, through Pi's loader, without RxJS's CommonJS build.
		const piLoad = report.context.find((r) => r.measure.startsWith("Pi loading the package as installed"));
		expect(piLoad?.ours).toMatch(/\d/);
		expect(piLoad?.measure).not.toMatch(/CommonJS build loaded|no extension loaded/);
		expect(report.table).toContain("│");
		const written = await readFile(out, "utf8");
		expect(written).toContain("<!-- preset:tiny -->");
		expect(written).toContain("| measure | baseline | pbot | ratio | target | met |");
		expect(lines.some((l) => l.includes("cold ingest"))).toBe(true);

		// The floor row came out, and the floor scan counts what the projection holds: every
		// occurrence of a word in every session's folded text, as the project's own reader finds it.
		expect(report.context.some((r) => r.measure.includes("the floor of a search process") && /\d/.test(r.ours))).toBe(true);
		const data = join(root, `tiny-${DEFAULT_SEED}`);
		const textDir = join(data, "work", "cli", ".pi", "pbot", "text");
		let expected = 0;
		for (const name of (await readdir(textDir)).filter((n) => n.endsWith(".text"))) {
			const text = SessionText.parse(await readFile(join(textDir, name)), name.slice(0, -".text".length), "whole");
			const folded = text.bytes.subarray(text.textAt, text.originalAt).toString("utf8");
			expected += folded.split("the").length - 1;
		}
		expect(expected).toBeGreaterThan(0);
		// With the byte search's module (as the bench runs it) and with `Buffer.indexOf` alone; from
		// the sources, and built to CommonJS as a large run takes it (`npm test` builds first).
		const built = join("dist", "bench", "bench", "floorScan.cjs");
		const ways = [["--import", "tsx", join("bench", "floorScan.cts")], ...(existsSync(built) ? [[built]] : [])];
		for (const way of ways)
			for (const module of [BYTE_SEARCH_WASM, undefined]) {
				const args = [join(data, "sessions"), textDir, "the", ...(module ? [module] : [])];
				const floor = spawnSync(process.execPath, [...way, ...args], { encoding: "utf8" });
				expect(floor.stderr).toBe("");
				expect(JSON.parse(floor.stdout)).toEqual({ total: expected, stamps: true });
			}
	});
});
