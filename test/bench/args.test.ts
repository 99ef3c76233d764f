/**
 * The bench runner's command line: an option it does not know, or a bad value, stops it before
 * anything runs (it once took `--help` for nothing, ran the whole small preset and rewrote
 * bench/RESULTS.md).
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BENCH_USAGE, BenchUsageError, parseBenchArgs } from "../../bench/run.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("bench command line", () => {
	it("takes the options it documents", () => {
		const o = parseBenchArgs(["--preset", "large", "--seed", "7", "--runs", "2", "--only", "query,pi", "--nodes", "10000,100000", "--out", "-"]);
		expect(o).not.toBe("help");
		if (o === "help") return;
		expect(o).toMatchObject({ preset: "large", seed: 7, runs: 2, only: ["query", "pi"], nodes: [10000, 100000] });
		expect(o.out).toBeUndefined();
		expect(parseBenchArgs([])).toMatchObject({ preset: "small" });
		expect(parseBenchArgs(["--help"])).toBe("help");
	});

	it("refuses what it does not know, saying what", () => {
		const refused = (argv: string[]) => {
			try {
				parseBenchArgs(argv);
			} catch (err) {
				expect(err).toBeInstanceOf(BenchUsageError);
				return (err as Error).message;
			}
			throw new Error(`${argv.join(" ")} was taken`);
		};
		expect(refused(["--hlep"])).toMatch(/--hlep/);
		expect(refused(["--preset"])).toMatch(/--preset/);
		expect(refused(["--preset", "huge"])).toMatch(/unknown preset "huge"; one of .*large/);
		expect(refused(["--only", "query,qeury"])).toMatch(/unknown step "qeury"/);
		expect(refused(["--runs", "0"])).toMatch(/--runs: a whole number of at least 1/);
		expect(refused(["--seed", "x"])).toMatch(/--seed/);
		expect(refused(["--nodes", "1e6"])).toMatch(/--nodes/);
		expect(refused(["query"])).toMatch(/query/);
	});

	it("as a process: --help prints the usage, a wrong option exits 2 before running anything", { timeout: 60_000 }, () => {
		const run = (args: string[]) => spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "bench", "run.ts"), ...args], { cwd: ROOT, encoding: "utf8" });
		const help = run(["--help"]);
		expect(help.status).toBe(0);
		expect(help.stdout.trim()).toBe(BENCH_USAGE);
		expect(help.stderr).not.toMatch(/\[bench/);
		const wrong = run(["--hlep", "--out", "-"]);
		expect(wrong.status).toBe(2);
		expect(wrong.stderr).toMatch(/^bench: .*--hlep/);
		expect(wrong.stderr).toContain("usage: npm run bench");
		expect(wrong.stderr).not.toMatch(/\[bench/);
	});
});
