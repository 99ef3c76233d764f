/**
 * Makes the V8 code cache of the CLI's code-cached script (`dist/cli-bundle/cli.cjs`, see
 * `src/cli/launch.ts`). Run by `scripts/bundle-cli.mjs` in a process of its own, so the cache
 * is made by a plain `node`, as the bin runs.
 *
 * The cache holds what V8 compiled up to the moment it is made, so it is made after the script ran
 * `sessions`, `search` and `read` (text and `--json`) on a workspace of the bundled sample sessions,
 * ingested first by the bin in another process, and then `ingest` again with nothing changed (the
 * cache is for queries and that check, not the ingest pipeline: every query deserializes all of it).
 * The script's last line and the cache's first name the same build id: a cache is used only with
 * the script it was made for, and only whole (its first line says its length).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { buildMark, cacheHeader, loadCliScript, CLI_SCRIPT_CACHE, CLI_SCRIPT } = await import(join(root, "dist", "cli", "launch.js"));

const id = randomBytes(16).toString("hex");
appendFileSync(CLI_SCRIPT, buildMark(id));

const workspace = mkdtempSync(join(tmpdir(), "pbot-code-cache-"));
try {
	const where = ["-w", workspace, "-s", join(root, "fixtures", "sessions"), "--agent-dir", join(workspace, "agent")];
	execFileSync(process.execPath, [join(root, "bin", "pbot-history.cjs"), "ingest", ...where], { stdio: "ignore" });

	const query = loadCliScript(null);
	if (!query) throw new Error(`${CLI_SCRIPT} is missing`);
	let out = "";
	const io = { stdout: (t) => void (out += `${t}\n`), stderr: () => undefined, cwd: workspace, color: false };
	const run = async (argv) => {
		out = "";
		const code = await query.runCli(argv, io);
		if (code !== 0) throw new Error(`pbot-history ${argv.join(" ")} exited ${code} while making the code cache`);
		return out;
	};
	await run(["sessions", ...where]);
	await run(["sessions", "--json", ...where]);
	await run(["search", "the", ...where]);
	const hits = JSON.parse(await run(["search", "the", "--json", ...where]));
	const hit = hits.groups?.[0]?.hits?.[0]?.id;
	if (typeof hit !== "string") throw new Error("no hit to read while making the code cache");
	await run(["read", hit, ...where]);
	await run(["read", hit, "--json", ...where]);
	// An ingest that finds nothing changed (the workspace was ingested above), as scripts run it again and again.
	await run(["ingest", ...where]);
	await run(["ingest", "--json", ...where]);

	const made = `${CLI_SCRIPT_CACHE}.${process.pid}.tmp`;
	const data = query.script.createCachedData();
	writeFileSync(made, Buffer.concat([Buffer.from(`${cacheHeader(id, data.length)}\n`, "latin1"), data]));
	renameSync(made, CLI_SCRIPT_CACHE);
} finally {
	rmSync(workspace, { recursive: true, force: true });
}
