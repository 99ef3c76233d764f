/**
 * A CLI process loads only what its command needs: commands are defined eagerly (`--help` lists
 * them all) but their implementations are imported by their actions. Checked on the built bin, by
 * recording every module the process resolves (a module-resolution hook) and every CommonJS
 * module it loads.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);

/** Registers a resolve hook that reports each resolved URL, and prints them all (with CommonJS's cache) at exit. */
const RECORDER = `
import { register, createRequire } from "node:module";
import { MessageChannel } from "node:worker_threads";
const { port1, port2 } = new MessageChannel();
const urls = new Set();
port1.on("message", (url) => urls.add(url));
port1.unref();
register("data:text/javascript," + encodeURIComponent(
	"let port; export function initialize(data) { port = data.port; }" +
	"export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }"
), { data: { port: port2 }, transferList: [port2] });
process.on("exit", () => {
	for (const key of Object.keys(createRequire(process.cwd() + "/startup-recorder.js").cache)) urls.add(key);
	process.stderr.write("\\n@@loaded " + JSON.stringify([...urls]) + "\\n");
	process.stderr.write("\\n@@builtins " + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice(13))) + "\\n");
});
`;

/**
 * The modules a CLI process loads: of the bin as shipped (bundled: Node resolves its chunks and the
 * packages left outside it), or (`modules`) of the same build before bundling, where each of
 * pbot's modules is a file of its own — the bundle keeps its lazy imports as chunks, so what the
 * module build loads is what the bundle's chunks hold.
 */
async function loadedBy(args: readonly string[], env: Record<string, string> = {}, build: "bin" | "modules" = "modules"): Promise<string[]> {
	const entry =
		build === "bin"
			? ["bin/pbot-history.cjs"]
			: ["--input-type=module", "-e", 'import { runCli } from "./dist/cli/main.js"; process.exitCode = await runCli(process.argv.slice(1));', "--"];
	const { stderr } = await exec(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(RECORDER)}`, ...entry, ...args], {
		cwd: process.cwd(),
		env: { ...process.env, ...env },
	});
	const line = stderr.split("\n").find((l) => l.startsWith("@@loaded "));
	const builtins = stderr.split("\n").find((l) => l.startsWith("@@builtins "));
	if (!line || !builtins) throw new Error(`no module list in stderr: ${stderr}`);
	// Node's own modules as `node:<name>` (what the process loaded, however it was asked for).
	const own = (JSON.parse(builtins.slice("@@builtins ".length)) as string[]).map((m) => `node:${m}`);
	return [...(JSON.parse(line.slice("@@loaded ".length)) as string[]).map((u) => u.replace(/\\/g, "/")), ...own];
}

const loads = (modules: readonly string[], fragment: string) => modules.some((m) => m.includes(fragment));

/**
 * Node's own modules a process of the bin loads beyond those loaded before its first line runs,
 * recorded by a CommonJS preload that imports nothing (the recorder above imports
 * `node:worker_threads` itself). Standard output is a pipe, as when the agent or a script runs it.
 */
async function builtinsLoadedBy(dir: string, args: readonly string[]): Promise<string[]> {
	const preload = join(dir, "builtins-recorder.cjs");
	await writeFile(
		preload,
		`const before = new Set(process.moduleLoadList);
process.on("exit", () => require("node:fs").writeSync(2, "\\n@@builtins " + JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith("NativeModule ")).map((m) => "node:" + m.slice(13))) + "\\n"));
`,
	);
	const { stderr } = await exec(process.execPath, ["--require", preload, "bin/pbot-history.cjs", ...args], { cwd: process.cwd() });
	const line = stderr.split("\n").find((l) => l.startsWith("@@builtins "));
	if (!line) throw new Error(`no module list in stderr: ${stderr}`);
	return JSON.parse(line.slice("@@builtins ".length)) as string[];
}

describe("pbot-history start-up", () => {
	let dir: string;
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), "pbot-startup-"));
	});
	afterAll(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("--help loads commander and the command definitions, not the service, its pipeline or any command's implementation", async () => {
		const modules = await loadedBy(["--help"]);
		expect(loads(modules, "/node_modules/commander/")).toBe(true);
		for (const heavy of [
			"/node_modules/rxjs/",
			"/node_modules/immer/",
			"/node_modules/chokidar/",
			"/node_modules/ndjson/",
			"/node_modules/@mariozechner/",
			"/dist/services/history/service/historyService.js",
			"/dist/storage/",
			"/dist/cli/watchCommand.js",
			"/dist/cli/queryFormat.js",
		]) {
			expect(loads(modules, heavy), heavy).toBe(false);
		}
	});

	it("the bundled bin loads a few chunks of its own, or the code-cached script, and none of the packages a command does not need", async () => {
		const help = await loadedBy(["--help"], {}, "bin");
		const sessions = await loadedBy(["sessions", "-w", dir, "--agent-dir", join(dir, "agent")], {}, "bin");
		// --help from the ES module bundle; a query from the code-cached script (`launch.ts`), read as
		// a file and run through node:vm, so neither the bundle nor any of its chunks is imported: only
		// the bin's launcher (`launch.ts` as CommonJS) is.
		expect(loads(help, "/dist/cli-bundle/main.js")).toBe(true);
		expect(sessions.filter((m) => m.includes("/dist/"))).toEqual([expect.stringContaining("/dist/cli-bundle/launch.cjs")]);
		for (const modules of [help, sessions]) {
			expect(loads(modules, "/dist/cli-bundle/launch.cjs")).toBe(true);
			// Bundled: none of pbot's modules is loaded as a file of its own, nor commander's.
			expect(modules.filter((m) => m.includes("/dist/") && !m.includes("/dist/cli-bundle/"))).toEqual([]);
			expect(loads(modules, "/node_modules/commander/")).toBe(false);
			for (const heavy of ["/node_modules/rxjs/", "/node_modules/chokidar/", "/node_modules/ndjson/", "/node_modules/@mariozechner/"])
				expect(loads(modules, heavy), heavy).toBe(false);
		}
	});

	it("a query command loads the service but not watch's chokidar and ndjson, nor Pi's SDK", async () => {
		const modules = await loadedBy(["sessions", "-w", dir, "--agent-dir", join(dir, "agent")]);
		expect(loads(modules, "/dist/services/history/service/historyService.js")).toBe(true);
		for (const heavy of [
			"/node_modules/chokidar/",
			"/node_modules/ndjson/",
			"/node_modules/@mariozechner/",
			"/dist/cli/watchCommand.js",
			"/dist/cli/demoCommand.js",
		]) {
			expect(loads(modules, heavy), heavy).toBe(false);
		}
	});

	it("queries of an ingested workspace whose files are unchanged (an empty session file among them) load no pipeline and no RxJS", async () => {
		const sessions = join(process.cwd(), "fixtures", "sessions");
		const args = ["-w", dir, "-s", sessions, "--agent-dir", join(dir, "agent")];
		// The bin reads session files with the RxJS it bundles (its ES modules), not the ≈ 250 CommonJS
		// files the package's exports give Node (≈ 110 ms); the module build loads those, when it reads a file.
		const fresh = await mkdtemp(join(tmpdir(), "pbot-startup-bin-"));
		try {
			// (From the code-cached script, as the queries: the launcher is the only file of dist/ it loads as a module.)
			const bundled = await loadedBy(["ingest", "-w", fresh, "-s", sessions, "--agent-dir", join(fresh, "agent")], {}, "bin");
			expect(existsSync(join(fresh, ".pi", "pbot", "history"))).toBe(true);
			expect(bundled.filter((m) => m.includes("/dist/"))).toEqual([expect.stringContaining("/dist/cli-bundle/launch.cjs")]);
			expect(loads(bundled, "/node_modules/rxjs/")).toBe(false);
		} finally {
			await rm(fresh, { recursive: true, force: true });
		}
		expect(loads(await loadedBy(["ingest", ...args]), "/node_modules/rxjs/")).toBe(true);
		for (const command of [["sessions"], ["search", "owner"], ["ingest"]]) {
			const modules = await loadedBy([...command, ...args]);
			expect(loads(modules, "/dist/services/history/service/historyService.js"), command[0]).toBe(true);
			for (const heavy of ["/node_modules/rxjs/", "/dist/services/history/ingest/sessionPipeline.js", "/dist/services/history/ingest/pairTurns.js"])
				expect(loads(modules, heavy), `${command[0]} ${heavy}`).toBe(false);
			// Nothing to hash or to name: Node's crypto is not loaded either (≈ 14 ms of CPU).
			expect(modules, command[0]).not.toContain("node:crypto");
		}
		// The bin as shipped: commander's child_process (for executable subcommands, of which there are none) is not loaded.
		// Nor crypto when a query writes a cache (the heads file removed: the query writes it again, by a temporary name).
		for (const command of [["sessions"], ["search", "owner"]]) {
			await rm(join(dir, ".pi", "pbot", "text", "heads.cache"), { force: true });
			const modules = await loadedBy([...command, ...args], {}, "bin");
			expect(existsSync(join(dir, ".pi", "pbot", "text", "heads.cache")), command[0]).toBe(true);
			expect(modules, command[0]).not.toContain("node:crypto");
			expect(modules, command[0]).not.toContain("node:child_process");
			expect(modules, command[0]).toContain("node:fs");
		}
	});
	it("a query whose output is a pipe loads none of Node's modules it does not use: streams for the pipe, worker_threads (a query that writes nothing takes no lock), fs/promises, perf_hooks", async () => {
		const sessions = join(process.cwd(), "fixtures", "sessions");
		const args = ["-w", dir, "-s", sessions, "--agent-dir", join(dir, "agent")];
		await exec(process.execPath, ["bin/pbot-history.cjs", "ingest", ...args], { cwd: process.cwd() });
		for (const command of [["sessions"], ["search", "owner"], ["search", "owner", "--json"]]) {
			const builtins = await builtinsLoadedBy(dir, [...command, ...args]);
			// (The recorder works: the code-cached script is run through node:vm.)
			expect(builtins, command.join(" ")).toContain("node:vm");
			// (Nor `fs/promises`, which storage reaches through `fs.promises` when it first writes, nor
			// `perf_hooks`, which the global `performance` loads: the time slices use `process.hrtime`.)
			for (const module of ["node:net", "node:stream", "node:worker_threads", "node:fs/promises", "node:perf_hooks"])
				expect(builtins, command.join(" ")).not.toContain(module);
		}
	});
});
