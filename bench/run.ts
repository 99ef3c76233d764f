/**
 * The benchmark runner: generates (or reuses) a preset's data, runs every benchmark in processes
 * of its own against baselines measured in the same run, prints the table and writes it to
 * `bench/RESULTS.md` (the preset's own section; other presets' sections stay).
 *
 *   npm run bench                          # quick preset (small), well under a minute
 *   npm run bench -- --preset large        # ~1 GB history, 120 MB session, 10k/100k/1M nodes
 *   options: --seed N  --data DIR  --out FILE|-  --runs N  --only cold,warm,search,read,live,memory,single,packages
 *            --nodes 10000,100000 (search corpora to run, of the preset's)
 *
 * Ratios are what count: absolute times are context (these machines are noisy). No benchmark
 * asserts anything; a target not met is reported as such.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureHistory, PRESETS, DEFAULT_SEED, type HistoryManifest } from "./generator/index.ts";

export { PRESETS };
import type { CliResult, ColdResult, NaiveResult, WarmResult } from "./tasks/ingest.ts";
import type { LiveResult } from "./tasks/liveTail.ts";
import type { PackageCosts } from "./tasks/packages.ts";
import type { QueryTiming, SearchResultSet } from "./tasks/search.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
/** The repository root, whether this runs from `bench/` (tsx) or `dist/bench/bench/` (built). */
const ROOT = existsSync(join(HERE, "..", "package.json")) ? resolve(HERE, "..") : resolve(HERE, "..", "..", "..");
const STEPS = ["cold", "warm", "search", "read", "live", "memory", "single", "packages"] as const;
type Step = (typeof STEPS)[number];

export interface BenchOptions {
	readonly preset: string;
	readonly seed?: number;
	/** Where generated data and scratch workspaces go (default `bench/data`). */
	readonly dataDir?: string;
	/** Results file to update, or `undefined` not to write one. */
	readonly out?: string;
	/** `dist`: children run the built JavaScript (`npm run bench` builds it); `tsx`: the sources. */
	readonly runtime?: "dist" | "tsx";
	readonly runs?: number;
	readonly only?: readonly Step[];
	/** Search corpora to run (node counts of the preset's); all of them when absent. */
	readonly nodes?: readonly number[];
	readonly log?: (line: string) => void;
}

/** One line of the results table. */
export interface BenchRow {
	readonly measure: string;
	readonly baseline: string;
	readonly ours: string;
	readonly ratio: string;
	readonly target: string;
	/** `yes`, `no`, or `—` (context, or not measurable here). */
	readonly met: string;
}

export interface BenchReport {
	readonly preset: string;
	readonly rows: readonly BenchRow[];
	readonly context: readonly BenchRow[];
	readonly notes: readonly string[];
	readonly table: string;
	readonly markdown: string;
}

const median = (xs: readonly number[]) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length === 0 ? Number.NaN : (s[Math.floor((s.length - 1) / 2)] as number);
};
const percentile = (xs: readonly number[], p: number) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number);
};
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 0)} MB`;
const ms = (x: number) => (Number.isNaN(x) ? "n/a" : x < 10 ? `${x.toFixed(2)} ms` : x < 1000 ? `${x.toFixed(1)} ms` : `${(x / 1000).toFixed(2)} s`);
const rate = (bytes: number, millis: number) => `${(bytes / 1e6 / (millis / 1000)).toFixed(0)} MB/s`;
const times = (x: number) => (Number.isFinite(x) ? `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)}×` : "n/a");
const yes = (ok: boolean) => (ok ? "yes" : "no");
const count = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 === 0 ? 0 : 2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(n % 1e3 === 0 ? 0 : 1)}k` : String(n));

/**
 * Runs a task in a child process and returns its result. Dirty pages left by the tasks before it
 * are flushed first (`sync`), so one task's write-back does not land in the next one's fsyncs.
 */
async function child<T>(options: BenchOptions, task: string, params: Record<string, unknown>, flags: readonly string[] = []): Promise<T> {
	// A cold ingest starts from no workspace: removed here, then everything flushed, so neither the
	// removal nor the last run's writes are still settling in the kernel while the next run is timed.
	if ((task === "cold" || task === "cli") && typeof params.workspace === "string") rmSync(params.workspace, { recursive: true, force: true });
	spawnSync("sync");
	const runtime = options.runtime ?? "dist";
	const args =
		runtime === "dist"
			? [...flags, join(ROOT, "dist", "bench", "bench", "child.js"), task, JSON.stringify(params)]
			: [...flags, "--import", "tsx", join(ROOT, "bench", "child.ts"), task, JSON.stringify(params)];
	return new Promise<T>((resolvePromise, reject) => {
		const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
		let out = "";
		let err = "";
		proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
		proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
		proc.on("error", reject);
		proc.on("close", (code) => {
			const line = out.split("\n").find((l) => l.startsWith("RESULT "));
			if (code !== 0 || !line) reject(new Error(`bench task ${task} failed (exit ${code}): ${err.slice(-2000)}`));
			else resolvePromise(JSON.parse(line.slice("RESULT ".length)) as T);
		});
	});
}

/** `rg` on this machine, or why not. */
function ripgrep(): { ok: true; version: string } | { ok: false; why: string } {
	const r = spawnSync("rg", ["--version"], { encoding: "utf8" });
	if (r.error || r.status !== 0) return { ok: false, why: "rg (ripgrep) is not installed here: the search baseline is skipped" };
	return { ok: true, version: (r.stdout.split("\n")[0] ?? "").trim() };
}

/** Wall time of `rg -i -F -c <query> <dir>` per query (counts every matching line, as search counts every hit). */
function rgTimes(dir: string, queries: readonly string[]): number[] {
	spawnSync("rg", ["-i", "-F", "-c", "--", "warm-up-the-cache", dir]);
	return queries.map((q) => {
		const s = performance.now();
		spawnSync("rg", ["-i", "-F", "-c", "--", q, dir], { maxBuffer: 64 << 20 });
		return performance.now() - s;
	});
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
	const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
	const preset = PRESETS[options.preset];
	if (!preset) throw new Error(`unknown preset ${options.preset}: one of ${Object.keys(PRESETS).join(", ")}`);
	const seed = options.seed ?? DEFAULT_SEED;
	const only = new Set<Step>(options.only ?? STEPS);
	const runs = options.runs ?? 3;
	const dataDir = resolve(options.dataDir ?? join(ROOT, "bench", "data"), `${preset.name}-${seed}`);
	const work = (name: string) => join(dataDir, "work", name);
	const rows: BenchRow[] = [];
	const context: BenchRow[] = [];
	const notes: string[] = [];
	const total = STEPS.filter((s) => only.has(s)).length + 1;
	let step = 0;
	const stage = (what: string) => log(`[bench ${preset.name}] ${++step}/${total} ${what}`);

	stage("data");
	let shown = -1;
	const manifest: HistoryManifest = ensureHistory({
		dir: dataDir,
		preset,
		seed,
		onProgress: (written, planned, what) => {
			const pct = Math.min(99, Math.floor((written / planned) * 100));
			if (pct >= shown + 5) {
				shown = pct;
				log(`  generating ${what}: ${pct}% of ~${mb(planned)}`);
			}
		},
	});
	const sessionsDir = join(dataDir, "sessions");
	const singleDir = join(dataDir, "single");
	const h = manifest.history;
	const share = (k: keyof typeof h.byKind) => `${((h.byKind[k] / h.bytes) * 100).toFixed(0)} %`;
	if (preset.name !== "large") notes.push(`The ${preset.name} preset is a smoke test: at this size, start-up and JIT warm-up weigh on every millisecond-scale timing and the ratios say little. The targets are for \`--preset large\`.`);
	notes.push(
		`History: ${h.files} session files, ${mb(h.bytes)}, ${h.questions} questions; bytes in tool results ${share("toolResult")}, assistant tool-call lines ${share("assistantToolCalls")}, user lines ${share("user")}, final answers ${share("finalAnswer")}. Single session: ${mb(manifest.single.bytes)}, ${manifest.single.questions} questions.`,
	);

	// ── Cold ingest (and the naive baseline), alternating runs ──
	/** The last cold run (its workspace is what the warm start opens), with the median time. */
	let cold: ColdResult | undefined;
	let coldPeakRange = { highest: 0, runs: 0 };
	if (only.has("cold") || only.has("warm") || only.has("read") || only.has("memory")) {
		stage(`cold ingest vs naive baseline (${runs} runs each)`);
		const naive: NaiveResult[] = [];
		const colds: ColdResult[] = [];
		for (let r = 0; r < runs; r++) {
			const n = await child<NaiveResult>(options, "naive", { dir: sessionsDir });
			const c = await child<ColdResult>(options, "cold", { dir: sessionsDir, workspace: work("history") });
			naive.push(n);
			colds.push(c);
			log(`  run ${r + 1}: naive ${rate(n.bytes, n.ms)}, pbot ${rate(c.bytes, c.ms)}`);
		}
		const naiveMs = median(naive.map((n) => n.ms));
		const coldMs = median(colds.map((c) => c.ms));
		// Peak RSS as the time: the median of the runs (it moves with the collector's timing from run
		// to run); the highest is said beside it.
		const c0 = { ...(colds[colds.length - 1] as ColdResult), ms: coldMs, peakRss: median(colds.map((c) => c.peakRss)) };
		coldPeakRange = { highest: Math.max(...colds.map((c) => c.peakRss)), runs: colds.length };
		cold = c0;
		if (only.has("cold")) {
			rows.push({
				measure: `cold ingest, ${preset.name} preset (${mb(h.bytes)}, ${c0.files} files → ${c0.sessions} archives, ${c0.qa} Q&A)`,
				baseline: `${rate(h.bytes, naiveMs)} (${ms(naiveMs)})`,
				ours: `${rate(h.bytes, coldMs)} (${ms(coldMs)})`,
				ratio: times(naiveMs / coldMs),
				target: "≥ 1.0×",
				met: yes(naiveMs / coldMs >= 1),
			});
		}
	}

	// ── Warm start and reads (new processes on the workspace the last cold run left) ──
	if ((only.has("warm") || only.has("read")) && cold) {
		stage(`warm start (${runs} new processes) and reads`);
		const warm: WarmResult[] = [];
		for (let r = 0; r < runs; r++) warm.push(await child<WarmResult>(options, "warm", { dir: sessionsDir, workspace: work("history"), reads: 300 }));
		const coldMs = cold.ms;
		const w = median(warm.map((x) => x.ms));
		const pick = warm.find((x) => x.ms === w) as WarmResult;
		if (only.has("warm")) {
			rows.push({
				measure: `warm start: new process, archives present, files unchanged — the ingest finds nothing to do (${pick.filesRead} files read, no archive read)`,
				baseline: `cold ingest ${ms(coldMs)}`,
				ours: ms(w),
				ratio: times(coldMs / w),
				target: "≥ 20×",
				met: yes(coldMs / w >= 20),
			});
			const loadMs = median(warm.map((x) => x.loadMs));
			context.push({ measure: `first query after a warm start: every archive read into memory (${cold.sessions} archives, ${mb(cold.archiveBytes)})`, baseline: `cold ingest ${ms(coldMs)}`, ours: ms(loadMs), ratio: times(coldMs / loadMs), target: "", met: "—" });
			context.push({ measure: "first query after a warm start: then the first search (builds the trigram index)", baseline: "", ours: ms(median(warm.map((x) => x.firstSearchMs))), ratio: "", target: "", met: "—" });
			context.push({ measure: `refresh before every query, nothing changed (${h.files} files)`, baseline: "", ours: ms(median(warm.map((x) => x.queryRefreshMs))), ratio: "", target: "", met: "—" });
		}
		if (only.has("read")) {
			const reads = warm.flatMap((x) => x.readMs);
			rows.push({ measure: `read p50 (${reads.length} reads of Q&A, summaries and sessions; ${ms(percentile(reads, 95))} p95)`, baseline: "—", ours: ms(median(reads)), ratio: "", target: "< 5 ms", met: yes(median(reads) < 5) });
			const service = warm.flatMap((x) => x.serviceReadMs);
			context.push({ measure: "read p50 through the service (a refresh of every file first, as the tool does)", baseline: "", ours: ms(median(service)), ratio: "", target: "", met: "—" });
		}
	}

	// ── Search over node-scaled corpora, against rg over the same raw files ──
	if (only.has("search")) {
		const searchNodes = options.nodes ? preset.searchNodes.filter((n) => options.nodes?.includes(n)) : preset.searchNodes;
		stage(`search over ${searchNodes.map(count).join(" / ")} nodes`);
		const rg = ripgrep();
		if (!rg.ok) notes.push(rg.why);
		else notes.push(`Search baseline: \`${rg.version}\`, \`rg -i -F -c <query> <corpus folder>\` (counts every matching line, as search counts every hit), wall time per query including the process start; pbot: \`searchHistory\` with the trigram index on the ingested corpus (a page of 20 hits with snippets and the total), median of 3 runs per query.`);
		notes.push("Query mix (drawn from each corpus with a fixed seed): 30 % phrases of 2–4 words cut from Q&A texts, 10 % the same upper-cased, 20 % identifiers (as often as they occur), 10 % CJK fragments of 3–6 characters, 10 % common words (error, config, session, test, cache, function, should, because, the user, import), 10 % identifiers that match nothing, 10 % phrases of 6–10 words. Queries of 1–2 characters are timed apart.");
		for (const nodes of searchNodes) {
			const dir = join(dataDir, `search-${nodes}`);
			const queries = nodes >= 1_000_000 ? 60 : 100;
			const scanQueries = nodes >= 1_000_000 ? 0 : 10;
			const result = await child<SearchResultSet>(options, "search", { dir, workspace: work(`search-${nodes}`), queries, scanQueries }, nodes >= 300_000 ? ["--max-old-space-size=16384"] : []);
			log(`  ${count(nodes)} nodes: ingest ${ms(result.ingestMs)}, index ${ms(result.indexBuildMs)}, p50 ${ms(median(result.queries.map((q) => q.ms)))}`);
			const ours = result.queries.map((q) => q.ms);
			const rgMs = rg.ok ? rgTimes(dir, result.queries.map((q) => q.query)) : [];
			const label = `${count(result.nodes)} nodes (${mb(result.bytes)} raw, ${result.files} files)`;
			for (const p of [50, 95] as const) {
				const o = percentile(ours, p);
				const b = rg.ok ? percentile(rgMs, p) : Number.NaN;
				rows.push({ measure: `search p${p}, ${label}`, baseline: rg.ok ? `rg -i -F ${ms(b)}` : "rg absent", ours: ms(o), ratio: rg.ok ? times(b / o) : "n/a", target: "≥ 20× (≤ 1/20 of rg)", met: rg.ok ? yes(b / o >= 20) : "—" });
			}
			const short = result.short.map((q) => q.ms);
			const rgShort = rg.ok ? rgTimes(dir, result.short.map((q) => q.query)) : [];
			context.push({ measure: `short queries (1–2 chars, arena scan) p50/p95, ${count(result.nodes)} nodes`, baseline: rg.ok ? `rg ${ms(median(rgShort))} / ${ms(percentile(rgShort, 95))}` : "", ours: `${ms(median(short))} / ${ms(percentile(short, 95))}`, ratio: rg.ok ? times(median(rgShort) / median(short)) : "", target: "", met: "—" });
			if (result.scan.length > 0) {
				const scan = result.scan.map((q) => q.ms);
				const same = result.scan.map((q) => q.hits).join() === result.queries.slice(0, result.scan.length).map((q) => q.hits).join();
				context.push({ measure: `scan search (no index) p50, ${count(result.nodes)} nodes, ${result.scan.length} queries${same ? ", same hits" : ", HITS DIFFER"}`, baseline: "", ours: ms(median(scan)), ratio: times(median(scan) / median(ours.slice(0, scan.length))), target: "", met: "—" });
			}
			context.push({ measure: `index: ${count(result.index.documents)} docs, ${count(result.index.trigrams)} trigrams; build / memory / heap after`, baseline: "", ours: `${ms(result.indexBuildMs)} / ${mb(result.index.memoryBytes)} / ${mb(result.heapUsed)}`, ratio: "", target: "", met: "—" });
			const hitCounts = result.queries.map((q) => q.hits);
			notes.push(`Search ${count(result.nodes)}: ${result.queries.length} queries (${hitCounts.filter((n) => n === 0).length} with no hit, median ${median(hitCounts)} hits, max ${Math.max(...hitCounts)}); slowest: ${[...result.queries].sort((a, b) => b.ms - a.ms).slice(0, 3).map((q: QueryTiming) => `"${q.query}" ${ms(q.ms)} (${q.hits} hits)`).join(", ")}.`);
		}
	}

	// ── Live tail ──
	if (only.has("live")) {
		stage("live tail: appended Q&A → searchable");
		const file = join(singleDir, readdirSync(singleDir).find((n) => n.endsWith(".jsonl")) ?? "");
		const startBytes = Math.min(manifest.single.bytes, preset.name === "large" ? 20_000_000 : 2_000_000);
		const live = await child<LiveResult>(options, "live", { file, startBytes, workspace: work("live"), appends: preset.name === "tiny" ? 8 : 40 });
		const found = live.searchableMs.filter((x) => x >= 0);
		const missed = live.searchableMs.length - found.length;
		rows.push({ measure: `live tail: Q&A appended to a running ${mb(live.fileBytes)} session → searchable, p95 of ${live.appends} (p50 ${ms(median(found))}${missed ? `, ${missed} missed` : ""})`, baseline: "—", ours: ms(percentile(missed ? [...found, Infinity] : found, 95)), ratio: "", target: "≤ 100 ms", met: yes(missed === 0 && percentile(found, 95) <= 100) });
		const written = live.writtenMs.filter((x) => x >= 0);
		context.push({ measure: "live tail: appended → archive written (lock, merge, atomic write, fsync), p50 / p95", baseline: "", ours: `${ms(median(written))} / ${ms(percentile(written, 95))}`, ratio: "", target: "", met: "—" });
	}

	// ── Memory after the cold ingest ──
	if (only.has("memory") && cold) {
		stage("memory");
		const c = cold;
		const spread = coldPeakRange.runs > 1 ? `, median of ${coldPeakRange.runs} runs (highest ${mb(coldPeakRange.highest)})` : "";
		rows.push({ measure: `peak RSS of the cold ingest (${preset.name})${spread} against the text it archived (Q&A and summary text, UTF-8)`, baseline: `archived text ${mb(c.textBytes)}`, ours: mb(c.peakRss), ratio: times(c.peakRss / c.textBytes), target: "≤ 2×", met: yes(c.peakRss <= 2 * c.textBytes) });
		context.push({ measure: `peak RSS against the archive files (${mb(c.archiveBytes)} of JSON on disk)`, baseline: mb(c.archiveBytes), ours: mb(c.peakRss), ratio: times(c.peakRss / c.archiveBytes), target: "", met: "—" });
		const cli = await child<CliResult>(options, "cli", { dir: sessionsDir, workspace: work("cli") });
		context.push({ measure: "`pbot-history ingest` as a person runs it (the CLI's modules and its ingest, a new workspace): peak RSS / time", baseline: `archived text ${mb(c.textBytes)}`, ours: `${mb(cli.peakRss)} / ${ms(cli.ms)}${cli.exitCode === 0 ? "" : ` (exit ${cli.exitCode})`}`, ratio: times(cli.peakRss / c.textBytes), target: "", met: "—" });
	}

	// ── The single long session ──
	if (only.has("single")) {
		stage(`single session (${mb(manifest.single.bytes)})`);
		const naive: NaiveResult[] = [];
		const ours: ColdResult[] = [];
		for (let r = 0; r < runs; r++) {
			naive.push(await child<NaiveResult>(options, "naive", { dir: singleDir }));
			ours.push(await child<ColdResult>(options, "cold", { dir: singleDir, workspace: work("single") }));
		}
		const n = median(naive.map((x) => x.ms));
		const o = median(ours.map((x) => x.ms));
		const last = ours[ours.length - 1] as ColdResult;
		rows.push({ measure: `single session of ${mb(manifest.single.bytes)} (${last.qa} Q&A), cold ingest`, baseline: `${rate(manifest.single.bytes, n)} (${ms(n)})`, ours: `${rate(manifest.single.bytes, o)} (${ms(o)})`, ratio: times(n / o), target: "≥ 1.0×", met: yes(n / o >= 1) });
		context.push({ measure: "single session: peak RSS of its ingest", baseline: mb(manifest.single.bytes), ours: mb(last.peakRss), ratio: "", target: "", met: "—" });
	}

	// ── Packages on the hot path ──
	if (only.has("packages")) {
		stage("ndjson, readline and RxJS on the hot path");
		const p = await child<PackageCosts>(options, "packages", { dir: sessionsDir, limitBytes: Math.min(h.bytes, 200_000_000) });
		const naive = p.ms.naive as number;
		const line = (measure: string, key: string) => context.push({ measure, baseline: `naive ${rate(p.bytes, naive)}`, ours: rate(p.bytes, p.ms[key] as number), ratio: times(naive / (p.ms[key] as number)), target: "", met: "—" });
		line("line source: ndjson.parse (split2 + JSON.parse) over a read stream", "ndjson");
		line("line source: node:readline + JSON.parse", "readline");
		line("our splitLines + full parse (decode + JSON.parse), through RxJS", "rxFull");
		line("our splitLines + fast path (raw bytes), through RxJS", "rxFast");
		line("the same fast path in a plain loop, without RxJS", "plainFast");
		line("the whole replay pipeline (parse → tree → Q&A → branches → plans → events), RxJS", "pipeline");
		const ev = p.events;
		context.push({ measure: `--json event stream: ndjson.stringify vs JSON.stringify per line (${ev} events)`, baseline: `JSON.stringify ${ms(p.eventMs.jsonStringify as number)}`, ours: `ndjson ${ms(p.eventMs.ndjsonStringify as number)}`, ratio: times((p.eventMs.jsonStringify as number) / (p.eventMs.ndjsonStringify as number)), target: "", met: "—" });
	}

	const machine = `${cpus()[0]?.model ?? "unknown CPU"} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM, Node ${process.version}, ${process.platform}`;
	const table = formatTable(rows, context);
	const markdown = formatMarkdown(preset.name, seed, machine, rows, context, notes);
	if (options.out) writeSection(options.out, preset.name, markdown);
	return { preset: preset.name, rows, context, notes, table, markdown };
}

function formatTable(rows: readonly BenchRow[], context: readonly BenchRow[]): string {
	const all = [...rows, ...context];
	const header: BenchRow = { measure: "measure", baseline: "baseline", ours: "pbot", ratio: "ratio", target: "target", met: "met" };
	const cols: (keyof BenchRow)[] = ["measure", "baseline", "ours", "ratio", "target", "met"];
	const width = (k: keyof BenchRow) => Math.min(k === "measure" ? 90 : 40, Math.max(...[header, ...all].map((r) => r[k].length)));
	const line = (r: BenchRow) => cols.map((k) => r[k].slice(0, width(k)).padEnd(width(k))).join(" │ ");
	const rule = cols.map((k) => "─".repeat(width(k))).join("─┼─");
	return [line(header), rule, ...rows.map(line), rule, ...context.map(line)].join("\n");
}

function formatMarkdown(preset: string, seed: number, machine: string, rows: readonly BenchRow[], context: readonly BenchRow[], notes: readonly string[]): string {
	const esc = (s: string) => s.replace(/\|/g, "\\|");
	const row = (r: BenchRow) => `| ${esc(r.measure)} | ${esc(r.baseline)} | ${esc(r.ours)} | ${esc(r.ratio)} | ${esc(r.target)} | ${esc(r.met)} |`;
	return [
		`## Preset \`${preset}\` (seed ${seed})`,
		"",
		`${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC · ${machine}`,
		"",
		"| measure | baseline | pbot | ratio | target | met |",
		"|---|---|---|---|---|---|",
		...rows.map(row),
		"",
		"Context (no target):",
		"",
		"| measure | baseline | pbot | ratio | | |",
		"|---|---|---|---|---|---|",
		...context.map(row),
		"",
		...notes.map((n) => `- ${n}`),
		"",
	].join("\n");
}

const INTRO = `# Benchmark results

Written by \`npm run bench\` (quick preset) and \`npm run bench -- --preset large\`; each preset
replaces its own section. Every ratio is against a baseline measured in the same run, on the same
generated data (\`bench/generator/\`, deterministic: same seed, same bytes). Absolute times are
context: the machines are noisy. See docs/architecture.md, "Performance", for what each measure
is and what was done to meet the targets.
`;

/** Replaces the preset's section of the results file (other presets' sections stay). */
function writeSection(file: string, preset: string, markdown: string): void {
	const start = `<!-- preset:${preset} -->`;
	const end = `<!-- /preset:${preset} -->`;
	const block = `${start}\n${markdown}${end}`;
	const current = existsSync(file) ? readFileSync(file, "utf8") : INTRO;
	const i = current.indexOf(start);
	const j = current.indexOf(end);
	const next = i >= 0 && j > i ? current.slice(0, i) + block + current.slice(j + end.length) : `${current.trimEnd()}\n\n${block}\n`;
	writeFileSync(file, next);
}

function parseArgs(argv: readonly string[]): BenchOptions {
	const arg = (name: string) => {
		const i = argv.indexOf(`--${name}`);
		return i >= 0 ? argv[i + 1] : undefined;
	};
	const out = arg("out");
	const only = arg("only");
	return {
		preset: arg("preset") ?? "small",
		...(arg("seed") ? { seed: Number(arg("seed")) } : {}),
		...(arg("data") ? { dataDir: arg("data") as string } : {}),
		...(out === "-" ? {} : { out: resolve(out ?? join(ROOT, "bench", "RESULTS.md")) }),
		...(arg("runs") ? { runs: Number(arg("runs")) } : {}),
		...(only ? { only: only.split(",") as Step[] } : {}),
		...(arg("nodes") ? { nodes: (arg("nodes") as string).split(",").map(Number) } : {}),
		runtime: fileURLToPath(import.meta.url).endsWith(".ts") ? "tsx" : "dist",
	};
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const report = await runBench(parseArgs(process.argv.slice(2)));
	process.stdout.write(`\n${report.table}\n\n${report.notes.map((n) => `- ${n}`).join("\n")}\n`);
}
