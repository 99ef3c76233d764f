import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * This package's version, from its `package.json`: the nearest one above this module named
 * `pbot-history` (the CLI runs from `src/cli`, `dist/cli`, `dist/cli-bundle` and the bench's
 * `dist/bench/src/cli`). Read when `--version` is asked, not at every start.
 */
export function packageVersion(): string {
	let dir = dirname(fileURLToPath(import.meta.url));
	for (let up = 0; up < 5; up++, dir = dirname(dir)) {
		try {
			const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
			if (pkg.name === "pbot-history" && typeof pkg.version === "string") return pkg.version;
		} catch {
			// none here, or not readable: look further up
		}
	}
	return "unknown";
}
