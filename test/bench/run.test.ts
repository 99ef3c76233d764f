/**
 * The benchmark runner works end to end on the tiny preset: every benchmark runs (in its own
 * process, as `npm run bench` runs them) and the table and the results file come out. This is the
 * CI smoke test of the bench; it asserts no timing.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBench } from "../../bench/run.ts";

const roots: string[] = [];
afterAll(async () => {
	for (const r of roots) await rm(r, { recursive: true, force: true });
});

describe("npm run bench", () => {
	it("runs every benchmark on the tiny preset and writes a table of ratios", { timeout: 120_000 }, async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-bench-"));
		roots.push(root);
		const out = join(root, "RESULTS.md");
		const lines: string[] = [];
		const report = await runBench({ preset: "tiny", runtime: "tsx", dataDir: root, out, runs: 1, log: (l) => lines.push(l) });
		const measures = report.rows.map((r) => r.measure).join("\n");
		for (const expected of ["cold ingest", "warm start", "search p50", "search p95", "read p50", "live tail", "peak RSS", "single session"]) expect(measures).toContain(expected);
		for (const row of report.rows) expect(["yes", "no", "—"]).toContain(row.met);
		expect(report.context.some((r) => r.measure.includes("ndjson"))).toBe(true);
		expect(report.table).toContain("│");
		const written = await readFile(out, "utf8");
		expect(written).toContain("<!-- preset:tiny -->");
		expect(written).toContain("| measure | baseline | pbot | ratio | target | met |");
		expect(lines.some((l) => l.includes("cold ingest"))).toBe(true);
	});
});
