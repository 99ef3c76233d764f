/**
 * The long crash loop (issue 6): a pbot process ingesting growing session files, then one
 * summarizing with pi-ai's faux model through the summary worker, each killed with SIGKILL at
 * random moments hundreds of times and restarted. After every kill every archive must parse,
 * nothing archived before may be missing, and every text projection file must be whole; at the
 * end a run to completion must equal a clean run, and after one query every projection must be
 * exactly its archive's.
 *
 *   npx tsx bench/crash-loop.ts [--kills 300] [--mode ingest|summarize|both] [--seed N]
 *
 * Prints progress, then one line per mode with the figures, and exits 1 if anything was lost.
 */
import { crashLoop, type CrashLoopResult } from "../test/durability/crashLoop.ts";

function arg(name: string, fallback: string): string {
	const i = process.argv.indexOf(`--${name}`);
	return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const kills = Number(arg("kills", "300"));
const mode = arg("mode", "both");
const seed = Number(arg("seed", "20260401"));
const modes = mode === "both" ? (["ingest", "summarize"] as const) : ([mode] as ("ingest" | "summarize")[]);

let failed = false;
for (const m of modes) {
	const started = Date.now();
	const r: CrashLoopResult = await crashLoop({ mode: m, kills, seed, log: (line) => console.log(`  ${line}`) });
	const seconds = ((Date.now() - started) / 1000).toFixed(0);
	console.log(
		`${m}: ${r.kills} kills (${r.killsInsideWrites} left a temporary or lock file, i.e. died inside a write; ${r.finishedFirst} children finished before their kill), ` +
			`${r.archivesChecked} archives checked, ${r.unreadable} unreadable, ${r.nodesLost} nodes lost, ${r.summariesLost} summaries lost, ` +
			`final run ${r.finalMatchesClean ? "equals" : "DIFFERS FROM"} a clean run (${r.finalCount} ${m === "ingest" ? "Q&A" : "summaries ready"}); ` +
			`${r.projectionsChecked} text projections checked, ${r.projectionsTorn} torn, final projections ${r.projectionMatches ? "match" : "DO NOT MATCH"} their archives, ${seconds} s`,
	);
	for (const p of r.problems.slice(0, 20)) console.log(`  problem: ${p}`);
	failed ||=
		r.problems.length > 0 ||
		r.unreadable > 0 ||
		r.nodesLost > 0 ||
		r.summariesLost > 0 ||
		!r.finalMatchesClean ||
		r.projectionsTorn > 0 ||
		!r.projectionMatches;
}
process.exitCode = failed ? 1 : 0;
