/**
 * What the build's ES module bundles share (`bundle-cli.mjs`, `bundle-extension.mjs`): the
 * package's dependencies left outside but for those named, and a bundle of one built entry into a
 * folder made anew, lazy imports kept as chunks.
 */
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The package's dependencies (and their subpaths) but `inline`, for esbuild's `external`. */
export function externalBut(inline) {
	const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
	return Object.keys(pkg.dependencies)
		.filter((name) => !inline.has(name))
		.flatMap((name) => [name, `${name}/*`]);
}

/** Bundles `entry` (`{ name: built file }`) into `outdir`, which is made anew. */
export async function esmBundle({ entry, outdir, inline, plugins = [] }) {
	// Chunks are named by content: an old build's would stay beside the new ones.
	rmSync(join(root, outdir), { recursive: true, force: true });
	await build({
		absWorkingDir: root,
		entryPoints: entry,
		outdir,
		bundle: true,
		splitting: true,
		format: "esm",
		platform: "node",
		target: "node20",
		external: externalBut(inline),
		sourcemap: true,
		logLevel: "warning",
		// Bundled CommonJS (commander) calls `require`, which an ES module needs to be given.
		banner: { js: 'import { createRequire as __pbotCreateRequire } from "node:module"; const require = __pbotCreateRequire(import.meta.url);' },
		plugins,
	});
}
