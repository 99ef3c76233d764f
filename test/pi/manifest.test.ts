/**
 * The package as Pi loads it: `pi -e <package>` and an installed package go through the
 * `pi.extensions` manifest, which names the built bundle (`scripts/bundle-extension.mjs`), loaded by
 * Pi's own loader (jiti). The end-to-end tests drive the real Pi with it; this checks what the
 * loader makes of it directly, with Pi's real loader.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { discoverAndLoadExtensions } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../..");

describe("the package's pi.extensions manifest", () => {
	let dir: string;
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), "pbot-manifest-"));
	});
	afterAll(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("names the bundled extension, which Pi's loader loads with the tool, the command and the events", async () => {
		const manifest = (JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { pi: { extensions: string[] } }).pi.extensions;
		expect(manifest).toEqual(["./dist/pi-extension/extension.js"]);

		const loaded = await discoverAndLoadExtensions([REPO], dir, join(dir, "agent"));
		expect(loaded.errors).toEqual([]);
		const ours = loaded.extensions.filter((e) => e.resolvedPath.startsWith(REPO));
		expect(ours.map((e) => e.resolvedPath)).toEqual([join(REPO, "dist", "pi-extension", "extension.js")]);
		const extension = ours[0];
		expect([...(extension?.tools.keys() ?? [])]).toEqual(["pbot_history"]);
		expect([...(extension?.commands.keys() ?? [])]).toContain("pbot");
		for (const event of ["session_start", "agent_end", "session_shutdown"]) expect(extension?.handlers.has(event), event).toBe(true);
	});

	it("loads none of RxJS's CommonJS files into Pi: the bundle carries what it uses of RxJS's ES modules", async () => {
		// In a process of its own, as Pi loads it: ≈ 250 CommonJS files took ≈ 110 ms of every Pi start.
		const script = [
			'import { createRequire } from "node:module";',
			'import { discoverAndLoadExtensions } from "@mariozechner/pi-coding-agent";',
			`const loaded = await discoverAndLoadExtensions([${JSON.stringify(REPO)}], ${JSON.stringify(dir)}, ${JSON.stringify(join(dir, "agent"))});`,
			"if (loaded.errors.length > 0) throw new Error(JSON.stringify(loaded.errors));",
			'if (!loaded.extensions.some((e) => e.tools.has("pbot_history"))) throw new Error("no pbot_history tool");',
			"console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));",
		].join("\n");
		const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: REPO });
		const commonJs = JSON.parse(stdout.trim().split("\n").at(-1) as string) as string[];
		expect(commonJs.length).toBeGreaterThan(0);
		expect(commonJs.filter((file) => file.includes(`${sep}node_modules${sep}rxjs${sep}`))).toEqual([]);
	});
});
