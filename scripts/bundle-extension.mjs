/**
 * Bundles the built Pi extension (`dist/integrations/pi/history/extension.js`) into
 * `dist/pi-extension/`, which the package's `pi.extensions` names: Pi loads an extension through
 * jiti, a file at a time, and from the TypeScript sources that took ≈ 170–270 ms of every Pi start
 * against ≈ 80–100 ms for the bundle (Pi's own `loadExtensions`, alternating runs on this machine).
 * Lazy imports stay chunks (the ingest pipeline and RxJS are loaded when a file has to be read).
 * Pi's packages stay outside, so the extension uses the instances Pi itself loaded (its loader
 * aliases them), and so do RxJS, chokidar and ndjson, as in the module build.
 */
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
/** Bundled in: small, and loaded at every start. */
const inline = new Set(["immer"]);
const external = Object.keys(pkg.dependencies)
	.filter((name) => !inline.has(name))
	.flatMap((name) => [name, `${name}/*`]);

// Chunks are named by content: an old build's would stay beside the new ones.
rmSync(join(root, "dist", "pi-extension"), { recursive: true, force: true });

await build({
	absWorkingDir: root,
	entryPoints: { extension: "dist/integrations/pi/history/extension.js" },
	outdir: "dist/pi-extension",
	bundle: true,
	splitting: true,
	format: "esm",
	platform: "node",
	target: "node20",
	external,
	sourcemap: true,
	logLevel: "warning",
	// Bundled CommonJS (none today) would need a `require` in an ES module.
	banner: { js: 'import { createRequire as __pbotCreateRequire } from "node:module"; const require = __pbotCreateRequire(import.meta.url);' },
});
