/**
 * The query commands run from the code-cached CommonJS script (`src/cli/launch.ts`): the build
 * made a cache V8 takes, the bin's queries answer exactly as the ES module bundle does, and a cache
 * that is not the script's (another build, cut short, missing, other V8 flags) changes nothing but
 * the speed. Checked on the
 * built files, each in a plain `node` process as the bin runs (a test runner's flags would make V8
 * reject any cache).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES_DIR as SAMPLE } from "../helpers/fixtures.ts";

const exec = promisify(execFile);
const ROOT = process.cwd();

interface Run {
	readonly code: number;
	readonly stdout: string;
	readonly stderr: string;
}

async function node(args: readonly string[]): Promise<Run> {
	try {
		const { stdout, stderr } = await exec(process.execPath, [...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
		return { code: 0, stdout, stderr };
	} catch (err) {
		const e = err as { code?: number; stdout?: string; stderr?: string };
		if (typeof e.code !== "number") throw err;
		return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
	}
}

/** The bin as shipped. */
const bin = (argv: readonly string[]) => node(["bin/pbot-history.cjs", ...argv]);
/** The ES module bundle, which ran every command before the script. */
const esm = (argv: readonly string[]) =>
	node([
		"--input-type=module",
		"-e",
		'import { runCli } from "./dist/cli-bundle/main.js"; process.exitCode = await runCli(process.argv.slice(1));',
		"--",
		...argv,
	]);
/** `loadCliScript(cacheFile)` in a process of its own: what became of the cache, and `argv`'s exit code. */
async function loaded(
	cacheFile: string | null,
	argv: readonly string[],
	flags: readonly string[] = [],
): Promise<{ cache: string; code: number; stdout: string }> {
	const program = `
		const { loadCliScript } = await import("./dist/cli/launch.js");
		const args = JSON.parse(process.argv[1]);
		const script = loadCliScript(args.cacheFile);
		let out = "";
		const code = await script.runCli(args.argv, { stdout: (t) => void (out += t + "\\n"), stderr: () => {}, cwd: process.cwd(), color: false });
		process.stdout.write(JSON.stringify({ cache: script.cache, code, stdout: out }));
	`;
	const run = await node([...flags, "--input-type=module", "-e", program, JSON.stringify({ cacheFile, argv })]);
	expect(run.code, run.stderr).toBe(0);
	return JSON.parse(run.stdout) as { cache: string; code: number; stdout: string };
}

describe("the CLI's code-cached script (queries, ingest, rebuild)", () => {
	let dir: string;
	let where: string[];
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), "pbot-cli-script-"));
		where = ["-w", dir, "-s", SAMPLE, "--agent-dir", join(dir, "agent")];
		const ingest = await bin(["ingest", ...where]);
		expect(ingest.code, ingest.stderr).toBe(0);
	});
	afterAll(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("is compiled with the cache the build made for it", async () => {
		const run = await loaded(join(ROOT, "dist", "cli-bundle", "cli.cache"), ["sessions", ...where]);
		expect(run.cache).toBe("accepted");
		expect(run.code).toBe(0);
		expect(run.stdout).toContain("Sessions 1–");
		// ASCII only (a one-byte string: decoded and compiled from its cache at once), without comments.
		const source = await readFile(join(ROOT, "dist", "cli-bundle", "cli.cjs"));
		expect(source.findIndex((byte) => byte > 0x7f)).toBe(-1);
		expect(source.includes("/**")).toBe(false);
	});

	it("answers every query exactly as the ES module bundle does, errors and exit codes included", async () => {
		const hits = JSON.parse((await bin(["search", "the", "--json", ...where])).stdout) as { groups: { hits: { id: string }[] }[] };
		const id = hits.groups[0]?.hits[0]?.id;
		expect(id).toBeDefined();
		const cases: string[][] = [
			["sessions", ...where],
			["sessions", "--json", "--limit", "2", ...where],
			["search", "the", ...where],
			["search", "the", "--json", "--offset", "3", ...where],
			["search", "", ...where],
			["search", "the", "--after", "not a date", ...where],
			["search", "the", "--bogus", ...where],
			["read", id as string, ...where],
			["read", id as string, "--json", ...where],
			["read", "qa_nothing_of_that_name", ...where],
			["search", "--help"],
			["ingest", ...where],
			["ingest", "--json", ...where],
			["ingest", "--bogus", ...where],
			["rebuild", "--help"],
		];
		for (const argv of cases) {
			const [ours, theirs] = await Promise.all([bin(argv), esm(argv)]);
			expect(ours, argv.join(" ")).toEqual(theirs);
		}
		// The cases above cover answers, usage errors (exit 2) and help.
		expect(new Set((await Promise.all(cases.map((c) => bin(c)))).map((r) => r.code))).toEqual(new Set([0, 2]));
	});

	it("reads the session files a query finds new (the ingest pipeline and RxJS required from the script), as the bundle does", async () => {
		const [ours, theirs] = [await mkdtemp(join(dir, "ours-")), await mkdtemp(join(dir, "theirs-"))];
		const runs = await Promise.all(
			[ours, theirs].map((w, i) => (i === 0 ? bin : esm)(["search", "the", "--json", "-w", w, "-s", SAMPLE, "--agent-dir", join(w, "agent")])),
		);
		expect(runs[0]?.code, runs[0]?.stderr).toBe(0);
		expect(runs[0]).toEqual(runs[1]);
		expect((JSON.parse(runs[0]?.stdout ?? "{}") as { total?: number }).total).toBeGreaterThan(0);
	});

	it("ingests a new workspace, and rebuilds one, as the bundle does: the same reports and the same archives", async () => {
		const [ours, theirs] = [await mkdtemp(join(dir, "ingest-ours-")), await mkdtemp(join(dir, "ingest-theirs-"))];
		for (const command of ["ingest", "rebuild"]) {
			const runs = await Promise.all(
				[ours, theirs].map((w, i) => (i === 0 ? bin : esm)([command, "--json", "-w", w, "-s", SAMPLE, "--agent-dir", join(w, "agent")])),
			);
			expect(runs[0]?.code, runs[0]?.stderr).toBe(0);
			expect(runs[0], command).toEqual(runs[1]);
			expect((JSON.parse(runs[0]?.stdout ?? "{}") as { sessions?: unknown[] }).sessions?.length, command).toBeGreaterThan(0);
			const archives = async (w: string) => {
				const folder = join(w, ".pi", "pbot", "history");
				const names = (await readdir(folder)).filter((n) => n.endsWith(".json")).sort();
				return Promise.all(names.map(async (n) => [n, await readFile(join(folder, n), "utf8")]));
			};
			expect(await archives(ours), command).toEqual(await archives(theirs));
		}
	});

	it("is not offered a cache of another build, cut short or missing, and runs the same when V8 rejects one", async () => {
		const made = await readFile(join(ROOT, "dist", "cli-bundle", "cli.cache"));
		const newline = made.indexOf(10);
		const [id, length] = made.toString("latin1", 0, newline).split(" ");
		expect(Number(length)).toBe(made.length - newline - 1);
		const argv = ["search", "the", "--json", ...where];
		const expected = await loaded(null, argv);
		expect(expected).toMatchObject({ cache: "none", code: 0 });
		expect(expected.stdout).toContain('"kind": "hits"');

		const other = join(dir, "other.cache");
		await writeFile(other, Buffer.concat([Buffer.from(`0123456789abcdef0123456789abcdef ${length}\n`), made.subarray(newline + 1)]));
		expect(await loaded(other, argv)).toEqual(expected);

		const cut = join(dir, "cut.cache");
		await writeFile(cut, made.subarray(0, made.length - 1000));
		expect(await loaded(cut, argv)).toEqual(expected);

		expect(await loaded(join(dir, "missing.cache"), argv)).toEqual(expected);

		// Made whole for this build, but by a process with other V8 flags than this one's.
		const flagged = await loaded(join(ROOT, "dist", "cli-bundle", "cli.cache"), argv, ["--max-old-space-size=300"]);
		expect(flagged).toEqual({ ...expected, cache: "rejected" });
		expect(id).toMatch(/^[0-9a-f]{32}$/);
	});
});
