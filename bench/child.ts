/**
 * One benchmark task in a process of its own (a fresh heap, its own peak RSS, a Pi of its own).
 * Started by `run.ts`:
 *   node dist/bench/bench/child.js <task> '<json params>'
 * Prints `RESULT <json>` as its last stdout line.
 */
import type { PiParams } from "./tasks/pi.ts";
import type { PiLoadParams } from "./tasks/piLoad.ts";

type Params = Record<string, unknown>;

// Each task loads only its own modules: a task's peak RSS must not include another's (Pi's SDK,
// chokidar, ndjson).
const tasks: Record<string, (p: Params) => Promise<unknown>> = {
	naive: async (p) => (await import("./tasks/ingest.ts")).naiveRead(p.dir as string),
	cold: async (p) => (await import("./tasks/ingest.ts")).coldIngest(p.dir as string, p.workspace as string),
	live: async (p) => (await import("./tasks/liveTail.ts")).liveTail(p.file as string, p.startBytes as number, p.workspace as string, p.appends as number),
	packages: async (p) => (await import("./tasks/packages.ts")).packageCosts(p.dir as string, p.limitBytes as number),
	pi: async (p) => (await import("./tasks/pi.ts")).piRun(p as unknown as PiParams),
	piLoad: async (p) => (await import("./tasks/piLoad.ts")).piLoad(p as unknown as PiLoadParams),
};

const [name, json] = process.argv.slice(2);
const task = name ? tasks[name] : undefined;
if (!task) {
	process.stderr.write(`unknown task ${name ?? ""}; one of ${Object.keys(tasks).join(", ")}\n`);
	process.exit(2);
}
const result = await task(JSON.parse(json ?? "{}") as Params);
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
// Watchers and timers of a task must not keep the process: its result is out.
process.exit(0);
