/**
 * Whole processes, as people run them: `pbot-history …` (a new Node process, the CLI's modules,
 * its work, its exit), `rg`, `node -e 0`. Wall time from spawn to exit, measured by the parent;
 * peak RSS through a tiny preload that writes `process.resourceUsage().maxRSS` at exit to a file
 * named by an environment variable (no extra package, works wherever Node does).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

export interface ProcessRun {
	readonly ms: number;
	/** Exit code; `null` when killed by a signal (then `signal` says which) or not started. */
	readonly code: number | null;
	readonly signal?: string;
	readonly stdout: string;
	readonly stderr: string;
	/** Peak RSS in bytes (only for runs with `rss`). */
	readonly peakRss?: number;
	/** Killed at its time limit. */
	readonly timedOut?: boolean;
	/** The first run hung without a word and was killed; this is the second (see `runProcess`). */
	readonly retried?: boolean;
}

export interface RunOptions {
	readonly cwd: string;
	/** Merged over this process's environment; a variable set to `undefined` is left out. */
	readonly env?: Readonly<Record<string, string | undefined>>;
	/** Measure peak RSS (a Node process only: the preload is passed as `--import`). */
	readonly rss?: { readonly hook: string; readonly file: string };
	/** Killed (SIGKILL) after this long; default `DEFAULT_TIMEOUT_MS`. */
	readonly timeoutMs?: number;
}

/**
 * No process runs longer than this unless its caller says: one that hangs is killed and counted as
 * a failure with its reason, instead of the bench (and CI, whose smoke test runs it) waiting for ever.
 */
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

const RSS_ENV = "PBOT_BENCH_MAXRSS_FILE";

const HOOK = `// Written by the pbot bench: the process's peak RSS (bytes) to the file $${RSS_ENV} names, at exit.
import { writeFileSync } from "node:fs";
const file = process.env.${RSS_ENV};
if (file) process.on("exit", () => { try { writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)); } catch {} });
`;

/** Writes the peak-RSS preload into `dir` and returns its path. */
export function writeRssHook(dir: string): string {
	mkdirSync(dir, { recursive: true });
	const file = join(dir, "maxrss-hook.mjs");
	writeFileSync(file, HOOK);
	return file;
}

/**
 * Runs `command args` to its end; stdout and stderr to pipes (kept, as text). A run killed at its
 * time limit having printed nothing is run once more (`retried`): in CI a Node child loading its
 * modules through tsx's loader thread once hung before running any of pbot's code, idle, for good.
 * A process that hangs again is a failure.
 */
export function runProcess(command: string, args: readonly string[], options: RunOptions): ProcessRun {
	const first = runOnce(command, args, options);
	if (!first.timedOut || first.stdout !== "") return first;
	return { ...runOnce(command, args, options), retried: true };
}

function runOnce(command: string, args: readonly string[], options: RunOptions): ProcessRun {
	const rss = options.rss;
	const fullArgs = rss ? ["--import", pathToFileURL(rss.hook).href, ...args] : [...args];
	if (rss) rmSync(rss.file, { force: true });
	const env = { ...process.env, ...(options.env ?? {}), ...(rss ? { [RSS_ENV]: rss.file } : {}) };
	const started = performance.now();
	const r = spawnSync(command, fullArgs, {
		cwd: options.cwd,
		env,
		stdio: ["ignore", "pipe", "pipe"],
		maxBuffer: 256 << 20,
		encoding: "utf8",
		timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
		killSignal: "SIGKILL",
	});
	const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
	const ms = performance.now() - started;
	let peakRss: number | undefined;
	if (rss && existsSync(rss.file)) peakRss = Number(readFileSync(rss.file, "utf8"));
	return {
		ms,
		code: r.error ? null : r.status,
		...(r.signal ? { signal: r.signal } : {}),
		stdout: r.stdout ?? "",
		stderr: r.error ? String(r.error.message) : (r.stderr ?? ""),
		...(peakRss !== undefined && Number.isFinite(peakRss) ? { peakRss } : {}),
		...(timedOut ? { timedOut } : {}),
	};
}

/** One of two processes run at once (`runOverlapping`): its command, and when to start it after the first. */
export interface OverlappingRun {
	readonly command: string;
	readonly args: readonly string[];
	readonly startAfterMs: number;
}

/**
 * Runs processes at the same time, each started `startAfterMs` after the first: two pbot processes
 * working on one workspace, as two terminals or two Pi sessions do. Each one's time is from its own
 * spawn to its exit; stdout and stderr kept as text. No peak RSS, no retry; killed at
 * `DEFAULT_TIMEOUT_MS` (or the options' limit) like any run.
 */
export async function runOverlapping(runs: readonly OverlappingRun[], options: RunOptions): Promise<ProcessRun[]> {
	const env = { ...process.env, ...(options.env ?? {}) };
	const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
	const one = (run: OverlappingRun): Promise<ProcessRun> =>
		new Promise((resolve) => {
			setTimeout(() => {
				const started = performance.now();
				const child = spawn(run.command, run.args, { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
				let stdout = "";
				let stderr = "";
				child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
				child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
				const limit = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
				child.on("error", (err) => {
					clearTimeout(limit);
					resolve({ ms: performance.now() - started, code: null, stdout, stderr: err.message });
				});
				child.on("close", (code, signal) => {
					clearTimeout(limit);
					resolve({ ms: performance.now() - started, code, ...(signal ? { signal } : {}), stdout, stderr });
				});
			}, run.startAfterMs);
		});
	return Promise.all(runs.map(one));
}

/** How the CLI is started: the built bin (`dist` runtime), or the sources through tsx. */
export function cliArgs(root: string, runtime: "dist" | "tsx"): string[] {
	return runtime === "dist" ? [join(root, "bin", "pbot-history.cjs")] : ["--import", "tsx", join(root, "bench", "cli.ts")];
}

/** Why a run failed, in a few words for a table cell. */
export function failure(run: ProcessRun): string {
	const why = run.signal ? `killed by ${run.signal}` : `exit ${run.code ?? "?"}`;
	const last = run.stderr.trim().split("\n").pop()?.trim() ?? "";
	return last ? `${why}: ${last.slice(0, 120)}` : why;
}

export function ensureDir(file: string): void {
	mkdirSync(dirname(file), { recursive: true });
}
