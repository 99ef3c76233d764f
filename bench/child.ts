/**
 * One benchmark task in a process of its own (a fresh heap, its own peak RSS, a real "new
 * process" for the warm start). Started by `run.ts`:
 *   node dist/bench/bench/child.js <task> '<json params>'
 * Prints `RESULT <json>` as its last stdout line.
 */
import { cliIngest, coldIngest, naiveRead, warmStart } from "./tasks/ingest.ts";
import { liveTail } from "./tasks/liveTail.ts";
import { packageCosts } from "./tasks/packages.ts";
import { searchCorpus } from "./tasks/search.ts";

type Params = Record<string, unknown>;

const tasks: Record<string, (p: Params) => Promise<unknown> | unknown> = {
	naive: (p) => naiveRead(p.dir as string),
	cold: (p) => coldIngest(p.dir as string, p.workspace as string),
	warm: (p) => warmStart(p.dir as string, p.workspace as string, p.reads as number),
	search: (p) => searchCorpus(p.dir as string, p.workspace as string, p.queries as number, p.scanQueries as number),
	live: (p) => liveTail(p.file as string, p.startBytes as number, p.workspace as string, p.appends as number),
	packages: (p) => packageCosts(p.dir as string, p.limitBytes as number),
	cli: (p) => cliIngest(p.dir as string, p.workspace as string),
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
