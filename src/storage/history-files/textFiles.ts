import { readdirSync, rmSync, statSync, promises as fsp } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import type { TextStore } from "../../services/history/service/ports.ts";
import { isValidId } from "../../services/history/model/ids.ts";
import { PBOT_DIR } from "./archiveFiles.ts";
import { sweepTemporaryFiles, sweepTemporaryFilesOf } from "./leftovers.ts";
import { isAlive } from "./fileLock.ts";
import { checkPbotFolder, makePbotFolder } from "./paths.ts";
import { fileIdentity, openRegularFile, readRegularFile, readRegularFileChunks, removeRegularFileIf } from "./regularFile.ts";
import { isTemporaryFile, replaceFileStreamed, replaceFileSync } from "./writeJsonAtomic.ts";

/** The text projection's folder, relative to the workspace (beside `history/`). */
export const TEXT_DIR = join(PBOT_DIR, "text");
const SUFFIX = ".text";
/** Every session's head in one file (a cache the projection checks entry by entry). */
const HEADS_FILE = "heads.cache";
/** Many sessions' projections in one file (a cache the projection checks entry by entry). */
const PACK_FILE = "pack.cache";
/** Written by `clear` while this process makes every projection again: `{ pid, host }`. */
const REMAKING_FILE = "remaking";

export function textDir(workspace: string): string {
	return join(resolve(workspace), TEXT_DIR);
}

/**
 * The workspace's `.pi/pbot/text/<sessionId>.text` files. Reads are synchronous: a search reads
 * every file once, and a thread-pool round trip per file cost more than the read (the files are
 * small and in the page cache). Writes are atomic (temporary file and rename) but not synced: the
 * projection is derived, and one lost in a power cut is noticed (its header names a revision its
 * archive no longer has, or it is cut short) and made again from the archive. They are synchronous
 * too: without a sync a write is a copy into the page cache, cheaper than a thread-pool round trip.
 */
export function workspaceTextStore(workspace: string): TextStore {
	const dir = textDir(workspace);
	let made = false;
	let checked = false;
	const file = (sessionId: string) => {
		if (!isValidId(sessionId)) throw new Error(`invalid session id ${JSON.stringify(sessionId.slice(0, 80))}`);
		if (!checked) {
			// Not read through a linked folder either (once per store: the listing checks again).
			checkPbotFolder(dirname(dir), dir);
			checked = true;
		}
		// (Joined by hand: `dir` is already absolute and normal, the id has no separator, and a
		// search names every file of the history.)
		return `${dir}${sep}${sessionId}${SUFFIX}`;
	};
	return {
		list: async () => {
			let names: string[];
			checkPbotFolder(dirname(dir), dir);
			try {
				names = readdirSync(dir);
			} catch (err) {
				if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
				throw err;
			}
			// What killed writers left (a pack's temporary file is as large as the text it holds): a
			// listing comes with an ingest and with every catch-up that made or removed projections.
			if (names.some(isTemporaryFile)) await sweepTemporaryFiles(dir);
			return names
				.filter((n) => n.endsWith(SUFFIX) && !isTemporaryFile(n))
				.map((n) => n.slice(0, -SUFFIX.length))
				.filter(isValidId);
		},
		read: async (sessionId, options) => {
			const read = readRegularFile(file(sessionId), options);
			if (read && options?.identity) options.identity(fileIdentity(read.stat));
			return read?.bytes;
		},
		readChunks: async (sessionId, { offset, length }, into, onChunk) => readRegularFileChunks(file(sessionId), offset, length, into, onChunk),
		write: async (sessionId, bytes) => {
			const target = file(sessionId);
			if (!made) {
				makePbotFolder(dirname(dir), dir);
				made = true;
			}
			try {
				replaceFileSync(target, bytes);
			} catch (err) {
				if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
				// The folder was removed meanwhile (a person clearing it): made again.
				makePbotFolder(dirname(dir), dir);
				replaceFileSync(target, bytes);
			}
		},
		remove: async (sessionId) => fsp.rm(file(sessionId), { force: true }),
		clear: async () => {
			// Only when `.pi/pbot` and the text folder are real folders inside the workspace: a link is
			// never followed out of it.
			checkPbotFolder(dirname(dir), dir);
			await fsp.rm(dir, { recursive: true, force: true });
			made = false;
			// Said to other processes, whose searches would otherwise find every projection missing.
			makePbotFolder(dirname(dir), dir);
			made = true;
			replaceFileSync(join(dir, REMAKING_FILE), Buffer.from(`${JSON.stringify({ pid: process.pid, host: hostname() })}\n`));
		},
		remakingElsewhere: () => {
			const path = join(dir, REMAKING_FILE);
			const note = readRegularFile(path)?.bytes;
			if (!note) return false;
			let holder: { pid?: unknown; host?: unknown };
			try {
				holder = JSON.parse(note.toString("utf8")) as typeof holder;
			} catch {
				return false;
			}
			if (typeof holder.pid !== "number" || holder.pid === process.pid) return false;
			// (Another host's process cannot be asked: its note is taken at its word.)
			if (holder.host !== hostname() || isAlive(holder.pid)) return true;
			// Its process ended before it made them again (killed): what is missing is said from now on.
			rmSync(path, { force: true });
			return false;
		},
		folderIdentity: () => {
			const stat = statSync(dir, { throwIfNoEntry: false });
			return stat ? `${stat.dev}:${stat.ino}` : undefined;
		},
		doneRemaking: async () => {
			await fsp.rm(join(dir, REMAKING_FILE), { force: true });
		},
		readHeads: async (options) => {
			checkPbotFolder(dirname(dir), dir);
			return readRegularFile(join(dir, HEADS_FILE), options)?.bytes;
		},
		writeHeads: async (bytes) => {
			makePbotFolder(dirname(dir), dir);
			replaceFileSync(join(dir, HEADS_FILE), bytes);
		},
		openFile: async (sessionId) => openRegularFile(file(sessionId)),
		removeIf: async (sessionId, identity) => removeRegularFileIf(file(sessionId), identity),
		openPack: async () => {
			checkPbotFolder(dirname(dir), dir);
			return openRegularFile(join(dir, PACK_FILE));
		},
		writePack: async (fill) => {
			makePbotFolder(dirname(dir), dir);
			// A pack is as large as the text it holds: one a killed writer left is not left for long.
			await sweepTemporaryFilesOf(dir, PACK_FILE);
			await replaceFileStreamed(join(dir, PACK_FILE), fill);
		},
	};
}
