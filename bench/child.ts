/**
 * One benchmark task in a process of its own (a fresh heap, its own peak RSS, a real "new
 * process" for the warm start). Started by `run.ts`:
 *   node dist/bench/bench/child.js <task> '<json params>'
 * Prints `RESULT <json>` as its last stdout line.
 */
type Params = Record<string, unknown>;

// Each task loads only its own modules: a task's peak RSS must not include another's (the search
// index, chokidar, ndjson, the CLI).
const tasks: Record<string, (p: Params) => Promise<unknown>> = {
	naive: async (p) => (await import("./tasks/ingest.ts")).naiveRead(p.dir as string),
	cold: async (p) => (await import("./tasks/ingest.ts")).coldIngest(p.dir as string, p.workspace as string),
	warm: async (p) => (await import("./tasks/ingest.ts")).warmStart(p.dir as string, p.workspace as string, p.reads as number),
	search: async (p) => (await import("./tasks/search.ts")).searchCorpus(p.dir as string, p.workspace as string, p.queries as number, p.scanQueries as number),
	live: async (p) => (await import("./tasks/liveTail.ts")).liveTail(p.file as string, p.startBytes as number, p.workspace as string, p.appends as number),
	packages: async (p) => (await import("./tasks/packages.ts")).packageCosts(p.dir as string, p.limitBytes as number),
	cli: async (p) => (await import("./tasks/ingest.ts")).cliIngest(p.dir as string, p.workspace as string),
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
