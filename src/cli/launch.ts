/**
 * How the bin starts a command. The query commands (`sessions`, `search`, `read`: what people run
 * most, and what the agent runs), and `ingest` and `rebuild`, come from one CommonJS script of the whole CLI,
 * `dist/cli-bundle/cli.cjs`, compiled with a V8 code cache the build made by running those
 * queries and an `ingest` that finds nothing changed (`scripts/cli-code-cache.mjs`): V8 then
 * neither parses the script nor compiles the functions they call, which had cost a query process ≈ 20–35 ms of its ≈ 250–330 ms on the
 * bench's history (whole processes, alternating). Node 20 keeps no compile cache of its own for ES
 * modules, so the cache needs a classic script. Every other command (and a query when the script is
 * missing) runs from the ES module bundle, `dist/cli-bundle/main.js`: Pi's SDK, which `summarize`
 * and `demo` load, is ES modules only and cannot be `require`d by Node 20.
 *
 * A cache is only ever an accelerator: V8 rejects one made by another Node or with other flags, and
 * one made for another build of the script (the build id the cache file starts with differs) or cut
 * short (its length is in the same line) is not even offered; then the script is compiled as usual.
 * V8 does not check the cached bytes themselves (a release build trusts them: altered ones crash the
 * process), so the cache is build output like the script, written whole by the build (a temporary
 * file renamed) and never by a command.
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { cliBuild, SERVED_COMMANDS, serverWanted, socketOf, socketOwnedByUs, workspaceArgument } from "./queryServer/address.ts";
import { askServer, type ClientIo } from "./queryServer/client.ts";
import { type RunRequest, SERVED_ENV } from "./queryServer/messages.ts";
import { type FirstCommand, SERVE_ARGUMENT, startServer } from "./queryServer/startServer.ts";
import { colorWanted, outputColumns, stderrIsTerminal, writeLine, writeStatus } from "./stdout.ts";

/** A CLI entry: `runCli` of `main.ts`. */
export type RunCli = (argv: readonly string[], io?: unknown) => Promise<number>;
/** The query server's entry: `serveQueries` of `main.ts`. */
export type ServeQueries = (first: FirstCommand, build: string) => Promise<void>;

/**
 * The commands run from the code-cached script: the queries, and the two that bring the archives up
 * to date, which need nothing the script lacks (Pi's SDK). An `ingest` that finds nothing changed (what
 * a script or a hook runs again and again) took 256 ms from the ES module bundle against 206 ms from
 * the script on the bench's 1 GB history (whole processes, alternating): the module loader and a
 * compile of the bundle with no cache.
 */
export const SCRIPT_COMMANDS: ReadonlySet<string> = new Set(["sessions", "search", "read", "ingest", "rebuild"]);

const bundleDir = join(dirname(fileURLToPath(import.meta.url)), "..", "cli-bundle");
/** The whole CLI as one CommonJS script (`scripts/bundle-cli.mjs`), its last line naming its build. */
export const CLI_SCRIPT = join(bundleDir, "cli.cjs");
/** `<build id> <bytes>\n`, then that many bytes of V8's code cache for that build of `CLI_SCRIPT`. */
export const CLI_SCRIPT_CACHE = join(bundleDir, "cli.cache");

/** What the script's last line says: `//# pbot-build <id>`. */
const BUILD_MARK = "//# pbot-build ";

/** The script loaded, and what became of its cache. */
export interface CliScript {
	readonly runCli: RunCli;
	readonly serveQueries: ServeQueries | undefined;
	/** `accepted` by V8; `rejected` by V8 (another Node, other flags); `none`: no cache for this build. */
	readonly cache: "accepted" | "rejected" | "none";
	/** The compiled script: the build makes the cache from it (`createCachedData`) after running queries. */
	readonly script: Script;
}

/**
 * Loads and runs the script (its top level only defines the CLI), with the cache when there is one
 * for its build (`cacheFile`; `null`: compiled without one); `undefined` when there is no script
 * (an unbundled build).
 */
export function loadCliScript(cacheFile: string | null = CLI_SCRIPT_CACHE): CliScript | undefined {
	let source: string;
	try {
		source = readFileSync(CLI_SCRIPT, "utf8");
	} catch {
		return undefined;
	}
	const cachedData = cacheFile === null ? undefined : cacheFor(cacheFile, buildOf(source));
	// The same wrapper whenever the script is compiled: a cache is of the exact source V8 compiled.
	const script = new Script(`(function (exports, require, module, __filename, __dirname, __pbotImportMetaUrl) {${source}\n})`, {
		filename: CLI_SCRIPT,
		...(cachedData ? { cachedData } : {}),
	});
	const module = { exports: {} as { runCli?: RunCli; serveQueries?: ServeQueries } };
	const body = script.runInThisContext() as (...args: unknown[]) => void;
	body(module.exports, createRequire(CLI_SCRIPT), module, CLI_SCRIPT, bundleDir, pathToFileURL(CLI_SCRIPT).href);
	const runCli = module.exports.runCli;
	if (typeof runCli !== "function") throw new Error(`${CLI_SCRIPT} does not define runCli: build again (npm run build)`);
	return {
		runCli,
		serveQueries: module.exports.serveQueries,
		cache: cachedData === undefined ? "none" : script.cachedDataRejected === true ? "rejected" : "accepted",
		script,
	};
}

/**
 * What the bin runs: the command `argv` names, its exit code set for the process. The bin is
 * CommonJS and loads this module as `dist/cli-bundle/launch.cjs` (`scripts/bundle-cli.mjs`): an ES
 * module bin made Node set up its ES module loader first, ≈ 10–15 ms of every query process
 * (whole processes, alternating), and a query loads no ES module at all.
 */
export async function runBin(argv: readonly string[]): Promise<void> {
	if (argv[0] === SERVE_ARGUMENT) return serve(argv[1]);
	if (!SERVED_COMMANDS.has(argv[0] ?? "") || !serverWanted()) {
		process.exitCode = await (await cliFor(argv))(argv);
		return;
	}
	// A query: the workspace's server answers when it runs; else this process does, and then
	// starts one for the next commands (`queryServer/server.ts`).
	const cwd = process.cwd();
	const workspace = workspaceArgument(argv, cwd);
	const socket = socketOf(workspace);
	const build = cliBuild(CLI_SCRIPT);
	let start = false;
	// Another user's server (root in a workspace where another user queried): not asked, not replaced.
	if (socket !== undefined && socketOwnedByUs(socket) !== false) {
		const asked = await askServer(socket, clientRequest(argv, cwd, build), clientIo());
		if (asked.kind === "answered") {
			process.exitCode = asked.code;
			return;
		}
		// (Declined for its build: that server is ending, and one of this build takes its place. Silent:
		// stopped or hung; another takes its socket over, and it ends once it sees that.)
		start = asked.kind === "none" || (asked.kind === "declined" && asked.why === "build") || (asked.kind === "failed" && asked.silent === true);
	}
	const code = await (await cliFor(argv))(argv);
	process.exitCode = code;
	// Only for a history that is there now (the command made or found `.pi/pbot`) and may hold a
	// socket (not a read-only one: each query would start a server that cannot listen), and a
	// command that worked.
	if (start && code === 0 && build !== "none" && socket !== undefined && writable(dirname(socket))) startServer(BIN, { argv, cwd, workspace });
}

/** Whether `folder` is there and this process may make files in it. */
function writable(folder: string): boolean {
	try {
		accessSync(folder, constants.W_OK | constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** The bin, which a server is started through. */
const BIN = join(bundleDir, "..", "..", "bin", "pbot-history.cjs");

/** The command for a server: as typed, with the terminal and environment its output depends on. */
function clientRequest(argv: readonly string[], cwd: string, build: string): Omit<RunRequest, "kind" | "protocol"> {
	const columns = outputColumns();
	const env: Record<string, string> = {};
	for (const name of SERVED_ENV) {
		const value = process.env[name];
		if (value !== undefined) env[name] = value;
	}
	return {
		build,
		argv,
		cwd,
		env,
		color: colorWanted(),
		...(columns !== undefined ? { columns } : {}),
		status: stderrIsTerminal(),
	};
}

/** Where a server's answer is written: as the CLI's own io writes (`main.ts`). */
function clientIo(): ClientIo {
	return { write: writeLine, status: stderrIsTerminal() ? writeStatus : undefined };
}

/** A server's process: serves until it ends, then exits (a history's timers must not keep it). */
async function serve(first: string | undefined): Promise<void> {
	const script = loadCliScript();
	if (first === undefined || !script?.serveQueries) return;
	await script.serveQueries(JSON.parse(first) as FirstCommand, cliBuild(CLI_SCRIPT));
	process.exit(0);
}

/** The CLI entry for `argv`: the code-cached script for the commands it serves (`SCRIPT_COMMANDS`), else the ES module bundle. */
export async function cliFor(argv: readonly string[]): Promise<RunCli> {
	if (SCRIPT_COMMANDS.has(argv[0] ?? "")) {
		const script = loadCliScript();
		if (script) return script.runCli;
	}
	const main = (await import(pathToFileURL(join(bundleDir, "main.js")).href)) as { runCli: RunCli };
	return main.runCli;
}

/** The build id the script's last line names (`undefined` without one). */
export function buildOf(source: string): string | undefined {
	const at = source.lastIndexOf(BUILD_MARK);
	if (at < 0) return undefined;
	const id = source.slice(at + BUILD_MARK.length).trim();
	return /^[0-9a-f]{16,64}$/.test(id) ? id : undefined;
}

/** The cache's V8 data when the file is of this build. */
function cacheFor(file: string, build: string | undefined): Buffer | undefined {
	if (build === undefined) return undefined;
	let bytes: Buffer;
	try {
		bytes = readFileSync(file);
	} catch {
		return undefined;
	}
	const end = bytes.indexOf(10);
	if (end < 0 || end > 128) return undefined;
	const data = bytes.subarray(end + 1);
	return bytes.toString("latin1", 0, end) === cacheHeader(build, data.length) ? data : undefined;
}

/** The line that ends the script: its build's id, written by the build. */
export function buildMark(id: string): string {
	return `\n${BUILD_MARK}${id}\n`;
}

/** The first line of a cache file: the build it is for, and how many bytes of V8 data follow. */
export function cacheHeader(id: string, bytes: number): string {
	return `${id} ${bytes}`;
}
