import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** What `pbot-history bench` passes to the runner (bench/run.ts's `BenchOptions`, as far as the CLI offers it). */
export interface BenchCommandOptions {
	readonly preset: string;
	readonly seed?: number;
	readonly dataDir: string;
	readonly out?: string;
	readonly runs?: number;
	readonly only?: readonly string[];
	readonly log: (line: string) => void;
}

interface BenchRunner {
	readonly PRESETS: Readonly<Record<string, unknown>>;
	runBench(options: BenchCommandOptions & { runtime: "dist" | "tsx" }): Promise<{ table: string; notes: readonly string[] }>;
}

/**
 * Where the benchmark runner is: built beside the CLI (`dist/bench/bench/run.js`, made by
 * `npm run build`), or its source when the CLI itself runs from source (tests, tsx).
 */
function runnerLocation(): { url: string; runtime: "dist" | "tsx" } | undefined {
	const built = new URL("../bench/bench/run.js", import.meta.url);
	if (import.meta.url.endsWith(".js") && existsSync(built)) return { url: built.href, runtime: "dist" };
	const source = new URL("../../bench/run.ts", import.meta.url);
	if (import.meta.url.endsWith(".ts") && existsSync(source)) return { url: source.href, runtime: "tsx" };
	return undefined;
}

/** A preset the runner does not know (a usage error: exit code 2). */
export class BenchPresetError extends Error {
	override readonly name = "BenchPresetError";
}

/** Generated histories go here unless `--data` says otherwise: outside the workspace, reused between runs. */
export function defaultBenchDataDir(): string {
	return join(tmpdir(), "pbot-history-bench");
}

/**
 * `pbot-history bench`: the same runner as `npm run bench` — each benchmark in a process of its
 * own, every ratio against a baseline measured in the same run — returning the table and notes
 * to print. Nothing is written to the workspace: data goes to `--data` (default: the OS temp
 * folder), results to `--out` only when asked.
 */
export async function runBenchCommand(options: BenchCommandOptions): Promise<string> {
	const where = runnerLocation();
	if (!where) throw new Error("the benchmark runner is not built: run `npm run build` in the pbot-history package first");
	const runner = (await import(where.url)) as BenchRunner;
	if (!Object.hasOwn(runner.PRESETS, options.preset))
		throw new BenchPresetError(`--preset: unknown preset ${JSON.stringify(options.preset)}; one of ${Object.keys(runner.PRESETS).join(", ")}`);
	const report = await runner.runBench({ ...options, dataDir: resolve(options.dataDir), runtime: where.runtime });
	return `${report.table}\n\n${report.notes.map((n) => `- ${n}`).join("\n")}`;
}
