/**
 * Bundles the built Pi extension (`dist/integrations/pi/history/extension.js`) into
 * `dist/pi-extension/`, and writes the entry the package's `pi.extensions` names,
 * `dist/pi-extension/index.ts`. Pi loads an extension through jiti, a file at a time; from the
 * TypeScript sources that took ≈ 170–270 ms of every Pi start against ≈ 35–65 ms for the bundle
 * (Pi's own `loadExtensions`, alternating runs on this machine).
 *
 * Pi's packages. jiti resolves `@mariozechner/pi-*` to Pi's own copies (its aliases) only in the
 * files it transpiles; a `.js` ES module it hands to Node, which resolves them from this package's
 * `node_modules`. An installed pbot-history has copies of its own there (the CLI needs them), so
 * the bundle alone would load a second Pi SDK at every Pi start (≈ 1 s), with provider registries
 * and theme state of its own. So the entry is a small TypeScript file, which jiti transpiles (and
 * caches): it imports Pi's packages, hands them over (`PI_PACKAGES`) and imports the bundle, in
 * which those packages are read from what it was handed (`piPackagesFromEntry`).
 *
 * Lazy imports stay chunks. chokidar and ndjson stay outside, as in the module build; immer and
 * RxJS are inside (RxJS from its ES modules: `rxjsFromEsModules`).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { esmBundle, root } from "./esmBundle.mjs";

/** The packages Pi gives an extension (those of its aliases that pbot imports). */
const PI_PACKAGES = ["@mariozechner/pi-ai", "@mariozechner/pi-coding-agent", "@mariozechner/pi-tui"];
/** Where the entry puts them for the bundle: one key for every copy of pbot in the process. */
const HANDED_OVER = "pbot-history.pi-packages";

/** Each of Pi's packages in the bundle: its exports, read from what the entry handed over. */
const piPackagesFromEntry = {
	name: "pi-packages-from-entry",
	async setup(b) {
		const names = new Map();
		for (const name of PI_PACKAGES)
			names.set(
				name,
				Object.keys(await import(name)).filter((key) => key !== "default"),
			);
		b.onResolve({ filter: /^@mariozechner\/pi-(ai|coding-agent|tui)$/ }, (args) => ({ path: args.path, namespace: "pi-package" }));
		b.onLoad({ filter: /.*/, namespace: "pi-package" }, (args) => {
			const exported = names.get(args.path);
			if (!exported) throw new Error(`${args.path} is not one of the packages the entry hands over`);
			return {
				contents: [
					`const handed = globalThis[Symbol.for(${JSON.stringify(HANDED_OVER)})]?.[${JSON.stringify(args.path)}];`,
					`if (!handed) throw new Error("pbot-history: load the package (its pi.extensions entry, dist/pi-extension/index.ts), not the bundle alone: ${args.path} comes from Pi through it");`,
					`export const { ${exported.join(", ")} } = handed;`,
				].join("\n"),
				loader: "js",
			};
		});
	},
};

await esmBundle({
	entry: { extension: "dist/integrations/pi/history/extension.js" },
	outdir: "dist/pi-extension",
	inline: new Set(["immer", ...PI_PACKAGES]),
	plugins: [piPackagesFromEntry],
});

const imports = PI_PACKAGES.map((name, i) => `import * as pi${i} from ${JSON.stringify(name)};`);
writeFileSync(
	join(root, "dist", "pi-extension", "index.ts"),
	`// Written by scripts/bundle-extension.mjs: what the package's pi.extensions names. Pi transpiles this
// file (jiti), so Pi's packages here are Pi's own copies; the bundle beside it, which Node loads, takes
// them from here rather than from this package's node_modules (a second copy of Pi's SDK).
${imports.join("\n")}

export default async function pbotHistory(pi: unknown): Promise<void> {
	(globalThis as Record<symbol, unknown>)[Symbol.for(${JSON.stringify(HANDED_OVER)})] = {
${PI_PACKAGES.map((name, i) => `\t\t${JSON.stringify(name)}: pi${i},`).join("\n")}
	};
	const { default: extension } = await import("./extension.js");
	return extension(pi);
}
`,
);
