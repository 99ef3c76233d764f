/**
 * Pi loading an extension package the way Pi does at every start: through its `pi.extensions`
 * manifest and Pi's own loader (`discoverAndLoadExtensions`, jiti), in a process where Pi's SDK is
 * already loaded (Pi's own modules are not what is timed). The bench's other Pi rows give pbot to
 * Pi as a factory from the module build; this is what a person's Pi loads: the manifest's entry
 * (transpiled by jiti, cached) and the bundle it imports.
 */
import { createRequire } from "node:module";

export interface PiLoadParams {
	/** The package folder (its `package.json` names the extension files). */
	readonly packageDir: string;
	readonly cwd: string;
	readonly agentDir: string;
}

export interface PiLoadResult {
	/** `discoverAndLoadExtensions` of the package, ms. */
	readonly loadMs: number;
	readonly extensions: number;
	readonly errors: readonly string[];
	/** CommonJS files under `node_modules/rxjs/` in the process after the load (RxJS's CommonJS build: none expected from pbot's bundle). */
	readonly rxjsCommonJsFiles: number;
}

export async function piLoad(p: PiLoadParams): Promise<PiLoadResult> {
	const { discoverAndLoadExtensions } = await import("@mariozechner/pi-coding-agent");
	const s = performance.now();
	const loaded = await discoverAndLoadExtensions([p.packageDir], p.cwd, p.agentDir);
	const loadMs = performance.now() - s;
	const cache = Object.keys(createRequire(import.meta.url).cache);
	return {
		loadMs,
		extensions: loaded.extensions.length,
		errors: loaded.errors.map((e) => JSON.stringify(e).slice(0, 300)),
		rxjsCommonJsFiles: cache.filter((f) => /[\\/]node_modules[\\/]rxjs[\\/]/.test(f)).length,
	};
}
