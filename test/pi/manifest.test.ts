/**
 * The package as Pi loads it: `pi -e <package>` and an installed package go through the
 * `pi.extensions` manifest, which names the built entry (`scripts/bundle-extension.mjs`): a small
 * TypeScript file Pi's loader (jiti) transpiles, which imports Pi's packages and the bundle beside
 * it. The end-to-end tests drive the real Pi with it; this checks what the loader makes of it
 * directly, with Pi's real loader, here and as an installed copy with Pi's packages of its own.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
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

	it("names the bundle's entry, which Pi's loader loads with the tool, the command and the events", async () => {
		const manifest = (JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { pi: { extensions: string[] } }).pi.extensions;
		expect(manifest).toEqual(["./dist/pi-extension/index.ts"]);

		const loaded = await discoverAndLoadExtensions([REPO], dir, join(dir, "agent"));
		expect(loaded.errors).toEqual([]);
		const ours = loaded.extensions.filter((e) => e.resolvedPath.startsWith(REPO));
		expect(ours.map((e) => e.resolvedPath)).toEqual([join(REPO, "dist", "pi-extension", "index.ts")]);
		const extension = ours[0];
		expect([...(extension?.tools.keys() ?? [])]).toEqual(["pbot_history"]);
		expect([...(extension?.commands.keys() ?? [])]).toContain("pbot");
		for (const event of ["session_start", "agent_end", "session_shutdown"]) expect(extension?.handlers.has(event), event).toBe(true);
	});

	it("installed with copies of Pi's packages in its own node_modules, runs on Pi's (Node would load the copies for the bundle)", async () => {
		// An installed package: its manifest, the built extension, and in its node_modules its own
		// dependencies — here Pi's three packages as copies that count their loads (and pass on the real
		// ones' exports: a copy that failed to load would send jiti down another path), and chokidar.
		const installed = join(dir, "installed");
		await mkdir(join(installed, "dist"), { recursive: true });
		const pkg = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as Record<string, unknown>;
		await writeFile(join(installed, "package.json"), JSON.stringify({ name: pkg.name, version: pkg.version, type: pkg.type, pi: pkg.pi }));
		await cp(join(REPO, "dist", "pi-extension"), join(installed, "dist", "pi-extension"), { recursive: true });
		for (const name of ["pi-ai", "pi-coding-agent", "pi-tui"]) {
			const at = join(installed, "node_modules", "@mariozechner", name);
			await mkdir(at, { recursive: true });
			await writeFile(join(at, "package.json"), JSON.stringify({ name: `@mariozechner/${name}`, type: "module", exports: "./index.js" }));
			const real = pathToFileURL(join(REPO, "node_modules", "@mariozechner", name, "dist", "index.js")).href;
			await writeFile(
				join(at, "index.js"),
				`globalThis.pbotCopiesLoaded = [...(globalThis.pbotCopiesLoaded ?? []), "${name}"];\nexport * from ${JSON.stringify(real)};\n`,
			);
		}
		await symlink(join(REPO, "node_modules", "chokidar"), join(installed, "node_modules", "chokidar"), "dir");
		// Pi's loader, as Pi (installed elsewhere: this repository's node_modules) runs it, in a process of its own.
		const script = [
			'import { discoverAndLoadExtensions } from "@mariozechner/pi-coding-agent";',
			`const loaded = await discoverAndLoadExtensions([${JSON.stringify(installed)}], ${JSON.stringify(dir)}, ${JSON.stringify(join(dir, "agent"))});`,
			"console.log(JSON.stringify({ errors: loaded.errors, tools: loaded.extensions.flatMap((e) => [...e.tools.keys()]), commands: loaded.extensions.flatMap((e) => [...e.commands.keys()]), copies: globalThis.pbotCopiesLoaded ?? [] }));",
		].join("\n");
		const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: REPO });
		const result = JSON.parse(stdout.trim().split("\n").at(-1) as string) as { errors: unknown[]; tools: string[]; commands: string[]; copies: string[] };
		expect(result.errors).toEqual([]);
		expect(result.copies).toEqual([]);
		expect(result.tools).toEqual(["pbot_history"]);
		expect(result.commands).toContain("pbot");
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
