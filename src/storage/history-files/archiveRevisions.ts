import { lstatSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { isValidId } from "../../services/history/model/ids.ts";
import { checkHistoryFolder, historyDir } from "./archiveFiles.ts";
import { checkPbotFolder } from "./paths.ts";
import { entryKind, readRegularText } from "./regularFile.ts";
import { isTemporaryFile, replaceFileSync, revisionOf } from "./writeJsonAtomic.ts";

/**
 * The revision of every archive in the workspace (`revisionOf`: size and modification time), by
 * session id: a listing and a `stat` per archive. What the text projection is checked against.
 */
export function archiveRevisions(workspace: string): Map<string, string> {
	const dir = historyDir(workspace);
	let names: string[];
	checkHistoryFolder(workspace);
	try {
		names = readdirSync(dir);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
		throw err;
	}
	const out = new Map<string, string>();
	for (const name of names) {
		if (!name.endsWith(".json") || isTemporaryFile(name)) continue;
		const id = name.slice(0, -".json".length);
		if (!isValidId(id)) continue;
		// Not following links: a link or a FIFO named like an archive gets a revision no projection
		// has, so the catch-up tries to read it and says why it cannot (never hidden, never waited on).
		const s = lstatSync(join(dir, name), { throwIfNoEntry: false });
		if (s) out.set(id, s.isFile() ? revisionOf(s) : `not-a-file:${s.mtimeMs}`);
	}
	return out;
}

/**
 * `archiveRevisions`, without a `stat` per archive when the history folder has not changed since
 * they were last taken. Every way pbot changes an archive (a temporary file renamed or linked in,
 * a lock made and removed, a damaged one moved aside) changes the folder's modification time, so
 * an unchanged folder (same inode and nanosecond time) means unchanged archives — for pbot's
 * writers. A file changed in place by hand shows only in its own `stat`: `ingest` asks for fresh
 * revisions, and `read` reads the archive itself. The revisions are kept in
 * `.pi/pbot/text/archives.cache` (derived, beside the projection), and only when the folder had
 * been still for `SETTLED_MS` before they were taken: within the file system's clock tick after a
 * write, a second write could leave the folder's time as it was (the reasoning of git's "racy" index).
 */
export function cachedArchiveRevisions(workspace: string): Map<string, string> {
	const dir = historyDir(workspace);
	const before = folderStamp(dir);
	const cacheFile = join(dirname(dir), "text", ARCHIVES_CACHE);
	if (before !== undefined) {
		try {
			const cached = readRegularText(cacheFile);
			if (cached !== undefined) {
				const value = JSON.parse(cached) as { stamp?: unknown; revisions?: unknown };
				if (value.stamp === before && typeof value.revisions === "object" && value.revisions !== null) {
					checkHistoryFolder(workspace);
					return new Map(Object.entries(value.revisions as Record<string, string>).filter(([id, r]) => isValidId(id) && typeof r === "string"));
				}
			}
		} catch {
			// a damaged or foreign cache: the archives are looked at
		}
	}
	const revisions = archiveRevisions(workspace);
	// Kept only when the folder was still before and did not change while it was read.
	if (before !== undefined && folderStamp(dir) === before) {
		try {
			checkPbotFolder(dirname(dir), dirname(cacheFile));
			if (entryKind(dirname(cacheFile)) === "a folder")
				replaceFileSync(cacheFile, Buffer.from(JSON.stringify({ stamp: before, revisions: Object.fromEntries(revisions) })));
		} catch {
			// a cache: the next process looks at the archives again
		}
	}
	return revisions;
}

const ARCHIVES_CACHE = "archives.cache";
/** How long the history folder must have been unchanged for its time to vouch for its archives. */
const SETTLED_MS = 2000;

/** The history folder's inode and modification time, when it has been still for `SETTLED_MS`; else `undefined`. */
function folderStamp(dir: string): string | undefined {
	const s = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
	if (!s?.isDirectory()) return undefined;
	if (Date.now() - Number(s.mtimeMs) < SETTLED_MS) return undefined;
	return `${s.ino}:${s.mtimeNs}`;
}
