import { readdirSync, promises as fsp } from "node:fs";
import { join } from "node:path";
import { historyDir } from "./archiveFiles.ts";
import { isAlive, isLockLeftover } from "./fileLock.ts";
import { isTemporaryFile } from "./writeJsonAtomic.ts";

/**
 * Removes what killed writers leave in the history folder: temporary files and stale-lock asides
 * of processes that are gone (and older than 10 s: a write takes milliseconds, and the pid may be
 * another host's), and any older than an hour. Returns how many were removed.
 */
export async function sweepLeftovers(workspace: string): Promise<number> {
	return sweepFolder(historyDir(workspace), isLeftoverName);
}

/** A name in the history folder that `sweepLeftovers` looks at: a temporary file, a stale lock set aside. */
export function isLeftoverName(name: string): boolean {
	return isTemporaryFile(name) || (isLockLeftover(name) && !name.endsWith(".lock"));
}

/**
 * Removes the temporary files of `file` (in its folder) that killed writers left, as
 * `sweepLeftovers` does: what a large file's writer (the text pack) looks at before it writes.
 */
export async function sweepTemporaryFilesOf(dir: string, file: string): Promise<number> {
	return sweepFolder(dir, (name) => name.startsWith(`.${file}.`) && isTemporaryFile(name));
}

/** Removes the temporary files killed writers left in `dir` (as `sweepLeftovers` judges them): the text folder's. */
export async function sweepTemporaryFiles(dir: string): Promise<number> {
	return sweepFolder(dir, isTemporaryFile);
}

async function sweepFolder(dir: string, isLeftover: (name: string) => boolean): Promise<number> {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return 0;
	}
	let removed = 0;
	for (const name of names) {
		if (!isLeftover(name)) continue;
		const pid = Number(/\.(\d+)\.[0-9a-f]+\.(tmp|stale)$/.exec(name)?.[1]);
		let age: number;
		try {
			age = Date.now() - (await fsp.stat(join(dir, name))).mtimeMs;
		} catch {
			continue;
		}
		const gone = Number.isInteger(pid) && pid !== process.pid && !isAlive(pid);
		if (age > 3_600_000 || (gone && age > 10_000)) {
			await fsp.rm(join(dir, name), { force: true });
			removed++;
		}
	}
	return removed;
}
