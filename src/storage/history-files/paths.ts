import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { access } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";

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

/**
 * What `.pi/pbot/.gitignore` says: history can hold pasted secrets, so nothing under `.pi/pbot` is
 * committed unless the person opts in (by deleting the file).
 */
export const PBOT_GITIGNORE = "# pbot history can hold pasted secrets: nothing here is committed. Delete this file to opt in to committing it.\n*\n";

/**
 * Makes a folder under the workspace's `.pi/pbot` (`dir`, or `pbotDir` itself). When `.pi/pbot`
 * is made here, its `.gitignore` is written with it; one a person deleted later is not put back.
 */
export function makePbotFolder(pbotDir: string, dir: string = pbotDir): void {
	if (!existsSync(pbotDir)) {
		mkdirSync(pbotDir, { recursive: true });
		try {
			writeFileSync(join(pbotDir, ".gitignore"), PBOT_GITIGNORE, { flag: "wx" });
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
		}
	}
	if (dir !== pbotDir) mkdirSync(dir, { recursive: true });
}
