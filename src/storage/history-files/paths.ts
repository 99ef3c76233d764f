import { access } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";

/**
 * Whether `path` is `dir` or inside it. Only an absolute path can say where it is: a relative one
 * (in a session header or an old record) would be read against whatever folder we run in.
 */
export function isInside(path: string, dir: string): boolean {
	if (!isAbsolute(path)) return false;
	const rel = relative(resolve(dir), resolve(path));
	return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Whether something exists at `path` (any error reads as "no"). */
export async function pathExists(path: string): Promise<boolean> {
	try {
		await access(path);
		return true;
	} catch {
		return false;
	}
}
