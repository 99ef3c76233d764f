/**
 * Bundles the built CLI (`dist/cli/main.js`) into `dist/cli-bundle/`: one file for what every
 * command loads, and a chunk per lazily imported part (each command's implementation, the ingest
 * pipeline), so a command still loads only what it needs. Measured (`bench/RESULTS.md`): a
 * query process resolves, reads and links ~55 modules unbundled, commander's CommonJS files
 * through Node's CommonJS lexer among them; bundled it starts ~30 ms sooner.
 *
 * Packages that only some commands need (Pi's SDK, chokidar, ndjson) stay outside: they are
 * imported from `node_modules` when, and only when, a command needs them. RxJS is inside, from its
 * ES modules (`rxjsFromEsModules`), in the pipeline's chunk: loaded only by a command that reads
 * a session file, as before, but in ≈ 2.5 ms instead of ≈ 110.
 */
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { bundleOptions, esmBundle, root } from "./esmBundle.mjs";

/** Bundled in: what every command loads. */
const inline = new Set(["commander", "immer"]);

/**
 * commander requires `node:child_process` when it loads, for executable subcommands, which pbot
 * has none of: loading it (with `net` and the streams it pulls in) cost every process ≈ 8 ms of
 * CPU. Its `require` gets a stand-in that loads the module the first time a property is read.
 */
const lazyChildProcess = {
	name: "lazy-child-process",
	setup(b) {
		b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
			args.importer.includes(`${join("node_modules", "commander")}`) ? { path: "child_process", namespace: "pbot-lazy" } : undefined,
		);
		b.onLoad({ filter: /.*/, namespace: "pbot-lazy" }, () => ({
			contents: 'let loaded; module.exports = new Proxy({}, { get: (_, key) => (loaded ??= require("node:child_process"))[key] });',
			loader: "js",
		}));
	},
};

await esmBundle({ entry: { main: "dist/cli/main.js" }, outdir: "dist/cli-bundle", inline, plugins: [lazyChildProcess] });

/**
 * The CLI's code-cached script (`src/cli/launch.ts`): the same CLI as one CommonJS file, run
 * through `node:vm` with a V8 code cache. `import.meta.url` is the script's own URL, passed in by
 * its loader. Its internal lazy imports stay lazy (each module is initialised when first
 * imported), and Node's `require` loads the packages left outside.
 */
await build({
	...bundleOptions({ inline, plugins: [lazyChildProcess] }),
	entryPoints: ["dist/cli/main.js"],
	outfile: "dist/cli-bundle/cli.cjs",
	format: "cjs",
	define: { "import.meta.url": "__pbotImportMetaUrl" },
	// Without comments and indentation, and ASCII only: every query process reads and decodes the
	// whole script before V8 takes its code cache (ASCII decodes to a one-byte string at once).
	minifyWhitespace: true,
	charset: "ascii",
});

/**
 * The bin's launcher (`src/cli/launch.ts` as CommonJS): the bin is a CommonJS file, so a query
 * process never sets up Node's ES module loader. `import.meta.url` is the launcher's own URL.
 */
await build({
	entryPoints: ["dist/cli/launch.js"],
	outfile: "dist/cli-bundle/launch.cjs",
	bundle: true,
	platform: "node",
	target: "node20",
	format: "cjs",
	banner: { js: 'const __pbotLaunchUrl = require("node:url").pathToFileURL(__filename).href;' },
	define: { "import.meta.url": "__pbotLaunchUrl" },
	logLevel: "warning",
});

// Its code cache, made by running queries in a process of its own (`scripts/cli-code-cache.mjs`).
const cache = spawnSync(process.execPath, [join(root, "scripts", "cli-code-cache.mjs")], { stdio: "inherit" });
if (cache.status !== 0) throw new Error(`scripts/cli-code-cache.mjs failed (exit ${cache.status})`);
