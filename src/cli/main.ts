/**
 * The CLI's entry: every command is defined here (or in `queryCommands.ts`) so `--help` lists them
 * with their options, but what a command does is loaded by its action (`await import`): a process
 * pays only for the modules its command uses (the service and its pipeline, chokidar, ndjson, Pi's
 * SDK), and `--help` or a usage error loads none of them.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { isQueryError } from "../services/history/query/errors.ts";
import { BenchPresetError, defaultBenchDataDir, runBenchCommand } from "./benchCommand.ts";
import type { IngestCommandOptions } from "./ingestCommand.ts";
import { packageVersion } from "./packageVersion.ts";
import { addQueryCommands, FLAG_OF_PARAMETER } from "./queryCommands.ts";
import { colorWanted, outputColumns, stderrIsTerminal, writeLine, writeStatus } from "./stdout.ts";
import { UsageError } from "./usageError.ts";
import { addWorkspaceOptions, workspaceFolder, workspaceOf, type WorkspaceOptions } from "./workspaceOptions.ts";
import type { OpenService } from "./workspaceService.ts";
import type { FirstCommand } from "./queryServer/startServer.ts";

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
	readonly stdout: (text: string) => void;
	readonly stderr: (text: string) => void;
	readonly cwd: string;
	/** Highlight matches with ANSI codes (default: off; the process's io turns it on for a terminal). */
	readonly color?: boolean;
	/** The width human output fits in (the process's io: the terminal's, or `COLUMNS`); none: whole lines. */
	readonly columns?: number | undefined;
	/** Stops long-running commands (`watch`); the process's io uses Ctrl+C. */
	readonly signal?: AbortSignal;
	/**
	 * Shows a line of progress (`undefined`: clears it). The process's io: on stderr when that is a
	 * terminal; none for a pipe or a file (a script, the agent), which get no progress.
	 */
	readonly status?: ((text: string | undefined) => void) | undefined;
	/**
	 * How the query commands open the workspace's history (default: anew, `openFromOptions`). The
	 * query server passes its own, which keeps the history open from command to command.
	 */
	readonly open?: OpenService | undefined;
}

const defaultIo: CliIo = {
	stdout: (t) => writeLine(1, t),
	stderr: (t) => writeLine(2, t),
	cwd: process.cwd(),
	// (Asked when a command formats its output, not when the CLI loads: a pipe's stream is never made.)
	get color() {
		return colorWanted();
	},
	get columns() {
		return outputColumns();
	},
	get status() {
		return stderrIsTerminal() ? writeStatus : undefined;
	},
};

/** Ctrl+C stopped the command after it cleaned up: exit code 130, as shells expect. */
class Interrupted extends Error {}

/**
 * Runs a command that Ctrl+C stops cleanly: `run` is given the signal the first Ctrl+C aborts
 * (`saying` is then called). With `againQuits`, a second Ctrl+C exits at once (130). The handler
 * is removed when `run` ends. `on`, not `once`: a library's exit hook (signal-exit) re-raises the
 * signal when it finds itself the only listener left, which a `once` listener makes it after it has run.
 */
async function untilCtrlC<T>(
	run: (signal: AbortSignal) => Promise<T>,
	options: { readonly saying?: () => void; readonly againQuits?: boolean } = {},
): Promise<T> {
	const controller = new AbortController();
	const onSigint = () => {
		if (controller.signal.aborted) {
			if (options.againQuits) process.exit(130);
			return;
		}
		options.saying?.();
		controller.abort();
	};
	process.on("SIGINT", onSigint);
	try {
		return await run(controller.signal);
	} finally {
		process.off("SIGINT", onSigint);
	}
}

export { UsageError } from "./usageError.ts";

/**
 * Serves the workspace's query commands until the server ends (`queryServer/server.ts`): the bin
 * runs it, from this script, in the process `startServer` starts.
 */
export async function serveQueries(first: FirstCommand, build: string): Promise<void> {
	const [{ serveQueries: serve }, { idleMsOf }] = await Promise.all([import("./queryServer/server.ts"), import("./queryServer/address.ts")]);
	await serve({ first, build, runCli, idleMs: idleMsOf(), keepText: SERVER_KEEPS_TEXT });
}

/**
 * Bytes of search text a query server keeps in memory: the bench's 1 GB history has ≈ 100 MB. A
 * larger history keeps this much, and reads the rest from its files at each search.
 */
const SERVER_KEEPS_TEXT = 256 << 20;

/** Runs the CLI; resolves to the exit code (0 ok, 2 bad arguments, 1 other failures, 130 interrupted). */
export async function runCli(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
	// Asked alone, before the commands are built: the version is read from package.json only then.
	if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
		io.stdout(packageVersion());
		return 0;
	}
	const program = buildProgram(io);
	try {
		await program.parseAsync([...argv], { from: "user" });
		return 0;
	} catch (err) {
		if (err instanceof CommanderError) {
			if (err.exitCode === 0) return 0; // --help, --version
			// (Commander printed its message; "too many arguments" is often an option left without
			// its value, which took the next option as one: said.)
			const took = valueTakenFromOption(program, argv);
			if (took) io.stderr(`pbot-history: ${took.option} took ${JSON.stringify(took.value)} as its value: give ${took.option} a value of its own`);
			return 2;
		}
		if (err instanceof Interrupted) return 130;
		// (`summarize` is loaded on demand: its error is known by name.)
		if (err instanceof UsageError || err instanceof BenchPresetError || (err instanceof Error && err.name === "SummarizeSetupError")) {
			io.stderr(`pbot-history: ${err.message}`);
			return 2;
		}
		// A bad or unknown parameter (bad date, negative limit, unknown id): the caller's mistake.
		if (isQueryError(err)) {
			const flag = FLAG_OF_PARAMETER[err.parameter] ?? err.parameter;
			io.stderr(`pbot-history: ${flag}: ${err.detail}`);
			return 2;
		}
		io.stderr(`pbot-history: ${(err as Error).message}`);
		return 1;
	}
}

/**
 * The first option of the command `argv` names that requires a value and was given another option
 * as one (`--limit --sessions DIR`), or `undefined`.
 */
function valueTakenFromOption(program: Command, argv: readonly string[]): { option: string; value: string } | undefined {
	const command = program.commands.find((c) => c.name() === argv[0]);
	if (!command) return undefined;
	const needsValue = new Set(command.options.filter((o) => o.required).flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined)));
	for (let i = 1; i + 1 < argv.length; i++) {
		const [option, value] = [argv[i] as string, argv[i + 1] as string];
		if (needsValue.has(option) && /^--?[a-zA-Z]/.test(value)) return { option, value };
	}
	return undefined;
}

function buildProgram(io: CliIo): Command {
	const program = new Command("pbot-history")
		.description("Searchable, portable archive of your Pi sessions: Q&A with hierarchical summaries.")
		.exitOverride()
		.configureOutput({ writeOut: (t) => io.stdout(t), writeErr: (t) => io.stderr(t) })
		.showHelpAfterError()
		// Answered by `runCli` before parsing; declared here so that help lists it.
		.option("-V, --version", "print the version")
		// An option given an empty value (`--limit ""`, `-w ""`, a shell variable that was not set) is a
		// mistake to say, not the same as leaving the option out.
		.hook("preAction", (_program, command) => {
			for (const option of command.options) {
				const value: unknown = command.getOptionValue(option.attributeName());
				const values = Array.isArray(value) ? value : [value];
				if (command.getOptionValueSource(option.attributeName()) === "cli" && values.some((v) => typeof v === "string" && v.trim() === ""))
					throw new UsageError(`${option.long ?? option.flags}: an empty value (give one, or leave the option out)`);
			}
		});

	const ingest = async (mode: "refresh" | "ingest", opts: IngestCommandOptions) => {
		// The first Ctrl+C stops after the file being read (what was read is stored, packed and
		// checkpointed: the next run goes on from there); a second one quits at once, which loses
		// nothing either (every write is atomic) but leaves that work to the next run.
		const stopped = await untilCtrlC(
			async (signal) => {
				const { runIngestCommand } = await import("./ingestCommand.ts");
				return runIngestCommand(mode, opts, io, io.signal ?? signal);
			},
			{ saying: () => io.stderr("pbot-history: stopping after the file being read (Ctrl+C again quits at once)"), againQuits: true },
		);
		if (stopped) throw new Interrupted();
	};

	addWorkspaceOptions(program.command("ingest"), io.cwd)
		.description("bring .pi/pbot/history/ up to date with the workspace's Pi sessions (files unchanged since they were ingested are not read)")
		.option("--json", "print the report as JSON")
		.action((opts: IngestCommandOptions) => ingest("refresh", opts));

	addWorkspaceOptions(program.command("rebuild"), io.cwd)
		.description("read every session file again and re-extract its archive (summaries and Q&A the files no longer hold are kept)")
		.option("--json", "print the report as JSON")
		.action((opts: IngestCommandOptions) => ingest("ingest", opts));

	addQueryCommands(program, {
		stdout: io.stdout,
		stderr: io.stderr,
		cwd: io.cwd,
		color: io.color ?? false,
		get columns() {
			return io.columns;
		},
		get status() {
			return io.status;
		},
		open: io.open,
	});

	addWorkspaceOptions(program.command("summarize"), io.cwd)
		.description("make the pending summaries now, with a model and key from Pi's settings (Ctrl+C stops cleanly)")
		.option("-m, --model <provider/id>", "the model to use (default: Pi's default model)")
		.option("--json", "print the report as JSON")
		.action((opts: WorkspaceOptions & { model?: string; json?: boolean }) =>
			untilCtrlC(async (signal) => {
				// Loaded here: it needs Pi's SDK (auth, model registry), which costs any command that loads
				// it about 100 MB before it reads a file.
				const [{ summarizeWorkspace, summarizeReportText, summarizeFailureLines, summarizeFailure }, { openFromOptions }] = await Promise.all([
					import("./summarizeCommand.ts"),
					import("./workspaceService.ts"),
				]);
				const report = await summarizeWorkspace(openFromOptions(opts, io.cwd, io.stderr, io.status), {
					workspace: workspaceOf(opts, io.cwd),
					...(opts.agentDir ? { agentDir: resolve(io.cwd, opts.agentDir) } : {}),
					...(opts.model ? { model: opts.model } : {}),
					signal,
					onPlan: (plan, model) => io.stderr(`pbot: making ${plan} with ${model}; Ctrl+C stops (what is made is kept)`),
					onProgress: (done, total) => io.stderr(`pbot: summaries ${done}/${total}`),
					onNewError: (error) => io.stderr(`pbot: model error: ${error}`),
				});
				// Why attempts failed, on stderr whatever the format (the JSON report lists them too).
				for (const line of summarizeFailureLines(report)) io.stderr(line);
				io.stdout(opts.json ? JSON.stringify(report, null, 2) : summarizeReportText(report, io.columns));
				if (report.aborted) throw new Interrupted();
				// Nothing made and every attempt failed: exit 1 (a partial failure exits 0, its errors said above).
				const failure = summarizeFailure(report);
				if (failure) throw new Error(failure);
			}),
		);

	addWorkspaceOptions(program.command("watch"), io.cwd)
		.description("keep the archives current while Pi runs, showing each new Q&A (Ctrl+C stops)")
		.option("--json", "print every history event as NDJSON instead (the initial replay included)")
		.action((opts: WorkspaceOptions & { json?: boolean }) =>
			untilCtrlC(async (signal) => {
				// Loaded here: chokidar, ndjson and the live tail are for this command only.
				const [{ watchWorkspace }, { openFromOptions, discoveryFromOptions }] = await Promise.all([
					import("./watchCommand.ts"),
					import("./workspaceService.ts"),
				]);
				await watchWorkspace({
					service: openFromOptions(opts, io.cwd, io.stderr, io.status),
					...discoveryFromOptions(opts, io.cwd),
					json: opts.json ?? false,
					stdout: io.stdout,
					stderr: io.stderr,
					signal: io.signal ?? signal,
					columns: () => io.columns,
				});
			}),
		);

	program
		.command("server")
		.description("the workspace's query server, which the query commands start and use: what it holds (status), or end it now (stop)")
		.argument("[action]", "status or stop", "status")
		.option("-w, --workspace <dir>", "the workspace (Pi's working directory)", io.cwd)
		.option("--json", "print what the server is as JSON")
		.action(async (action: string, opts: { workspace: string; json?: boolean }) => {
			const { serverCommand } = await import("./queryServer/serverCommand.ts");
			io.stdout(await serverCommand(action, workspaceFolder(opts, io.cwd), opts.json ?? false));
		});

	program
		.command("bench")
		.description("run the benchmarks against baselines measured in the same run, and print the table of ratios")
		.option("--preset <name>", "tiny, small (under a minute), medium or large (~1 GB history, ~10 min)", "small")
		.option("--seed <n>", "generator seed (same seed, same bytes)")
		.option("--data <dir>", "where generated histories are kept between runs", defaultBenchDataDir())
		.option("--out <file>", "also write the preset's section of a results file (e.g. bench/RESULTS.md)")
		.option("--runs <n>", "runs of each timed benchmark (the median is reported)")
		.option("--only <steps>", "comma-separated: cold,warm,cli,query,pi,projection,live,memory,single,packages")
		.action(async (opts: { preset: string; seed?: string; data: string; out?: string; runs?: string; only?: string }) => {
			const number = (flag: string, value: string | undefined) => {
				if (value === undefined) return undefined;
				const n = Number(value);
				if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag}: expected a positive whole number, got ${JSON.stringify(value)}`);
				return n;
			};
			const seed = number("--seed", opts.seed);
			const runs = number("--runs", opts.runs);
			const text = await runBenchCommand({
				preset: opts.preset,
				dataDir: resolve(io.cwd, opts.data),
				...(seed !== undefined ? { seed } : {}),
				...(runs !== undefined ? { runs } : {}),
				...(opts.out ? { out: resolve(io.cwd, opts.out) } : {}),
				...(opts.only ? { only: opts.only.split(",").map((s) => s.trim()) } : {}),
				log: io.stderr,
			});
			io.stdout(text);
		});

	program
		.command("demo")
		.description("ingest the bundled sample sessions into a temporary workspace, then list, search and read them")
		.option("--keep <dir>", "use this folder as the workspace instead of a temporary one")
		.option("--query <text>", "the word the demo searches for", "owner")
		.action(async (opts: { keep?: string; query: string }) => {
			const { runDemo } = await import("./demoCommand.ts");
			await runDemo({
				...(opts.keep ? { keep: opts.keep } : {}),
				query: opts.query,
				samples: bundledSessionsDir(),
				cwd: io.cwd,
				color: io.color ?? false,
				columns: io.columns,
				stdout: io.stdout,
			});
		});

	return program;
}

/** The sample sessions shipped in the package (`fixtures/sessions`). */
export function bundledSessionsDir(): string {
	// From src/cli/ (tests, tsx) and dist/cli/ (the built bin) alike, the package root is two levels up.
	return fileURLToPath(new URL("../../fixtures/sessions", import.meta.url));
}
