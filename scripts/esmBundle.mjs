/**
 * What the build's bundles share (`bundle-cli.mjs`, `bundle-extension.mjs`): the
 * package's dependencies left outside but for those named, and a bundle of one built entry into a
 * folder made anew, lazy imports kept as chunks.
 */
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
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

/**
 * RxJS from its ES module build, so the bundles carry only what pbot uses of it (≈ 21 KB). Under
 * Node its package exports name the CommonJS build first: ≈ 250 files that a process loaded one by
 * one, ≈ 110 ms on this machine (`import("rxjs")` in a new process), paid at every Pi start (the
 * live tail imports the pipeline) and by every command that reads a session file. Bundled from
 * the ES modules it is ≈ 2.5 ms.
 */
export const rxjsFromEsModules = {
	name: "rxjs-from-es-modules",
	setup(b) {
		// (Where npm put it: hoisted or not.)
		const esm = join(dirname(createRequire(join(root, "package.json")).resolve("rxjs/package.json")), "dist", "esm", "index.js");
		b.onResolve({ filter: /^rxjs$/ }, () => ({ path: esm }));
	},
};

/**
 * `lazyRxjs.js` (RxJS's `Observable` required when a session file is first read, in the module
 * build) as a static import of the RxJS the bundle carries: a `require` there would load RxJS's
 * CommonJS build beside it.
 */
export const lazyRxjsBundled = {
	name: "lazy-rxjs-bundled",
	setup(b) {
		b.onResolve({ filter: /\/lazyRxjs\.js$/ }, (args) =>
			args.importer.startsWith(join(root, "dist")) ? { path: "lazyRxjs", namespace: "pbot-bundled" } : undefined,
		);
		b.onLoad({ filter: /^lazyRxjs$/, namespace: "pbot-bundled" }, () => ({
			contents: 'import { Observable } from "rxjs"; export const observableClass = () => Observable;',
			loader: "js",
			resolveDir: root,
		}));
	},
};

/**
 * What every bundle of the build is made with, whatever its format: the package's dependencies
 * outside but `inline` and RxJS (always inside, from its ES modules), and the plugins that make
 * that so before the bundle's own.
 */
export function bundleOptions({ inline, plugins = [] }) {
	return {
		absWorkingDir: root,
		bundle: true,
		platform: "node",
		target: "node20",
		external: externalBut(new Set([...inline, "rxjs"])),
		logLevel: "warning",
		plugins: [rxjsFromEsModules, lazyRxjsBundled, ...plugins],
	};
}

/** Bundles `entry` (`{ name: built file }`) into `outdir`, which is made anew. */
export async function esmBundle({ entry, outdir, inline, plugins = [] }) {
	// Chunks are named by content: an old build's would stay beside the new ones.
	rmSync(join(root, outdir), { recursive: true, force: true });
	await build({
		...bundleOptions({ inline, plugins }),
		entryPoints: entry,
		outdir,
		splitting: true,
		format: "esm",
		sourcemap: true,
		// Bundled CommonJS (commander) calls `require`, which an ES module needs to be given.
		banner: { js: 'import { createRequire as __pbotCreateRequire } from "node:module"; const require = __pbotCreateRequire(import.meta.url);' },
	});
}
