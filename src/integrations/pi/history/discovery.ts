import { type Stats, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { isInside, pathExists } from "../../../storage/history-files/index.ts";
import { type KnownSessionHead, type SessionHeadFacts, SessionHeadsFile } from "../../../storage/history-files/sessionHeadsFile.ts";
import type { SessionDiscovery, SessionSource } from "../../../services/history/service/ports.ts";
import { sessionIdFromFileName } from "../../../services/history/model/sessionFileName.ts";
import { TimeSlice } from "../../../services/history/service/timeSlice.ts";
import type { FolderWatch } from "./folderWatch.ts";
import { fingerprintOf, listSessionFiles, readSessionHead, sessionFileSource, type SessionHead } from "./sessionFiles.ts";

export interface DiscoveryOptions {
	/** The workspace (Pi's cwd). */
	readonly workspace: string;
	/** Pi's agent directory (`getAgentDir()`); its `sessions/--<cwd>--` folder is scanned. */
	readonly agentDir?: string;
	/**
	 * Folders a person named explicitly: every session file in them is taken, whatever its `cwd`.
	 * Relative folders are resolved against the workspace.
	 */
	readonly sessionDirs?: readonly string[];
	/**
	 * Folders to scan for the workspace's sessions (Pi's current session folder, a flat custom
	 * `sessionDir`): a file is taken when its header's `cwd` lies in the workspace, or it was
	 * forked from a session that was taken.
	 */
	readonly scanDirs?: readonly string[];
	/** Files to take as they are (the current session file). */
	readonly files?: readonly string[];
	/** How long the scan of folders runs before the event loop may turn (`TimeSlice`; 0: between every two files). */
	readonly sliceMs?: number;
	/**
	 * Watches the folders looked at (Pi's runtime keeps one for the process): `changedSince` can
	 * then say which files to look at instead of all of them.
	 */
	readonly watch?: FolderWatch;
}

/** What the last full discovery with a watch saw: the folders, every session file in them, and those taken. */
interface Looked {
	readonly folders: readonly string[];
	readonly listed: ReadonlySet<string>;
	readonly taken: ReadonlySet<string>;
}
const looked = new WeakMap<FolderWatch, Looked>();

/**
 * Pi's native default session folder for a workspace, computed the way Pi computes it
 * (`getDefaultSessionDir`, which is not exported) but without creating it.
 */
export function nativeSessionDir(cwd: string, agentDir: string): string {
	const safe = `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
	return join(agentDir, "sessions", safe);
}

/**
 * What discovery learnt of files before, in this process: each file's source (a plain object over
 * its path) and its header's facts, kept while the file is the same file (inode) and has not
 * shrunk. Pi appends to a session file and never changes its header's `cwd`, `id` or
 * `parentSession`; a query in Pi discovers again every time, and reading every header of a large
 * session folder each time cost more than the rest of the query. A new process starts from the
 * workspace's `session-heads.cache` (the same facts, kept by the last discovery that read any).
 */
const knownSources = new Map<string, SessionSource>();
const knownHeads = new Map<string, KnownSessionHead>();

/** Forgets what this process learnt of session files' headers (a test starts as a new process would). */
export function forgetSessionHeads(): void {
	knownHeads.clear();
}

function sourceOf(path: string): SessionSource {
	let source = knownSources.get(path);
	if (!source) knownSources.set(path, (source = sessionFileSource(path)));
	return source;
}

/** The facts of a header, for a workspace (whether its `cwd` lies there). */
function factsOf(head: SessionHead, workspace: string): SessionHeadFacts {
	const parentId = head.parentSession ? sessionIdFromFileName(head.parentSession) : undefined;
	return {
		inside: head.cwd !== undefined && isInside(head.cwd, workspace),
		...(head.id !== undefined ? { id: head.id } : {}),
		...(parentId !== undefined ? { parentId } : {}),
	};
}

/**
 * A file's header facts — from this process's memory or the workspace's cache while it is the same
 * file, else read now (`read`) — and the `stat` taken to know that.
 */
function headOf(
	path: string,
	workspace: string,
	cached: () => ReadonlyMap<string, KnownSessionHead>,
	key: string,
): { facts: SessionHeadFacts | undefined; stat: Stats | undefined; known?: KnownSessionHead; read: boolean } {
	const stat = statSync(path, { throwIfNoEntry: false });
	const memoryKey = `${workspace}\0${path}`;
	const still = (k: KnownSessionHead | undefined): k is KnownSessionHead => stat !== undefined && k !== undefined && k.ino === stat.ino && stat.size >= k.size;
	const inMemory = knownHeads.get(memoryKey);
	if (still(inMemory)) return { facts: inMemory.facts, stat, known: inMemory, read: false };
	const inCache = cached().get(key);
	if (still(inCache)) {
		knownHeads.set(memoryKey, inCache);
		return { facts: inCache.facts, stat, known: inCache, read: false };
	}
	const head = stat?.isFile() ? readSessionHead(path) : undefined;
	if (!stat || !head) return { facts: undefined, stat, read: true };
	const known = { ino: stat.ino, size: stat.size, facts: factsOf(head, workspace) };
	knownHeads.set(memoryKey, known);
	return { facts: known.facts, stat, known, read: true };
}

/**
 * The source with its fingerprint from the `stat` discovery just took (an ingest asks for it
 * right after): one `stat` per file and query instead of two. Taken before the file is read, as
 * a fingerprint must be, so a change after it shows next time.
 */
function withStat(source: SessionSource, stat: Stats): SessionSource {
	const fingerprint = fingerprintOf(stat);
	return { ...source, fingerprint: async () => fingerprint };
}

/** Finds the workspace's session files: see `DiscoveryOptions` for which folders and why. */
export function fileDiscovery(options: DiscoveryOptions): SessionDiscovery {
	return {
		async discover() {
			const workspace = resolve(options.workspace);
			const warnings: string[] = [];
			const chosen = new Map<string, SessionSource>();
			const take = (path: string) => {
				if (!chosen.has(path)) chosen.set(path, sourceOf(path));
			};
			// A folder that cannot be listed (no permission, a link loop) is named and left out; the others are served.
			const listing = async (dir: string, named = false): Promise<string[]> => {
				try {
					return await listSessionFiles(dir, named);
				} catch (err) {
					const code = (err as NodeJS.ErrnoException).code;
					if (code === "ENOENT" || code === "ENOTDIR")
						warnings.push(`session folder ${dir} ${code === "ENOENT" ? "does not exist" : "is not a folder"}: no session read from it`);
					else warnings.push(`session folder ${dir} cannot be read (${code ?? (err as Error).message}): its sessions are left out`);
					return [];
				}
			};

			const named = (options.sessionDirs ?? []).map((d) => resolve(workspace, d));
			const scan = [...(options.scanDirs ?? []).map((d) => resolve(workspace, d))];
			if (options.agentDir) scan.push(nativeSessionDir(workspace, options.agentDir));
			const folders = [...new Set([...named, ...scan])];
			// Watched before they are listed: a change from here on is reported, and what came before is
			// seen now. What an earlier discovery saw no longer counts (this one may fail half-way).
			if (options.watch) {
				looked.delete(options.watch);
				options.watch.mark(folders);
			}
			const listed = new Set<string>();

			// Pi names the current file before it writes it (with the first answer): a file that
			// does not exist yet is skipped without a word.
			for (const file of options.files ?? []) {
				const path = resolve(workspace, file);
				if (await pathExists(path)) take(path);
			}
			// A folder the caller named that is not there, or no folder, is said (the CLI refuses one
			// before it starts; a library caller, or a folder removed since, would get an empty history
			// without a word). A scanned folder that is not there is normal: Pi makes it with the
			// workspace's first session.
			for (const dir of named)
				for (const file of await listing(dir, true)) {
					listed.add(file);
					take(file);
				}

			const facts = new Map<string, SessionHeadFacts>();
			const stats = new Map<string, Stats>();
			// The workspace's cache of header facts, read only when this process does not know a file.
			const cacheFile = new SessionHeadsFile(workspace);
			let cache: Map<string, KnownSessionHead> | undefined;
			const cached = () => (cache ??= cacheFile.load());
			const seen = new Map<string, KnownSessionHead>();
			let read = false;
			// A `stat` per file, and a header read for each file not known: thousands of files hold
			// the thread for a while, so the event loop may turn between them (Pi's input).
			const slice = new TimeSlice(options.sliceMs);
			for (const dir of new Set(scan)) {
				const folderKey = SessionHeadsFile.folderKey(dir);
				for (const file of await listing(dir)) {
					listed.add(file);
					if (chosen.has(file)) continue;
					await slice.pause();
					const key = SessionHeadsFile.keyOf(folderKey, basename(file));
					const found = headOf(file, workspace, cached, key);
					if (found.facts) facts.set(file, found.facts);
					if (found.stat) stats.set(file, found.stat);
					if (found.known) seen.set(key, found.known);
					read ||= found.read;
				}
			}
			// Kept for the next process when a header was read or a file went (not when nothing changed).
			if (read || (cache !== undefined && [...cache.keys()].some((k) => !seen.has(k)))) cacheFile.save(seen);
			// Workspace sessions first, then, until nothing changes, forks of what was taken.
			const takenIds = new Set<string>();
			for (const source of chosen.values()) if (source.fallbackSessionId) takenIds.add(source.fallbackSessionId);
			for (const [file, f] of facts) {
				if (f.inside) {
					take(file);
					if (f.id) takenIds.add(f.id);
				}
			}
			for (let changed = true; changed; ) {
				changed = false;
				for (const [file, f] of facts) {
					if (chosen.has(file) || !f.parentId) continue;
					if (takenIds.has(f.parentId)) {
						take(file);
						if (f.id) takenIds.add(f.id);
						changed = true;
					}
				}
			}
			const sources = [...chosen].map(([path, source]) => {
				const stat = stats.get(path);
				return stat ? withStat(source, stat) : source;
			});
			if (options.watch) looked.set(options.watch, { folders, listed, taken: new Set(chosen.keys()) });
			return { sources, warnings };
		},

		/**
		 * With a watch: the files to look at, those changed since the last full discovery, when the
		 * watch can say (every file reported changed was a session file then, taken or not, and is
		 * still there), else `undefined`. The named files (Pi's current one) are always among them:
		 * the live tail reads those, and its changes are not the watch's business.
		 */
		async changedSince() {
			const watch = options.watch;
			const last = watch ? looked.get(watch) : undefined;
			if (!watch || !last) return undefined;
			const changed = await watch.changedSinceMark(last.folders);
			if (!changed) return undefined;
			const workspace = resolve(options.workspace);
			// Each with the `stat` taken here, as the ingest's fingerprint (one per file, as in `discover`).
			const sources = new Map<string, SessionSource>();
			for (const path of changed) {
				const stat = statSync(path, { throwIfNoEntry: false });
				// A new file, or one gone: only a full discovery knows what it means (a fork, a session moved away).
				if (!last.listed.has(path) || !stat) return undefined;
				if (last.taken.has(path)) sources.set(path, withStat(sourceOf(path), stat));
			}
			for (const file of options.files ?? []) {
				const path = resolve(workspace, file);
				if (sources.has(path)) continue;
				const stat = statSync(path, { throwIfNoEntry: false });
				if (last.taken.has(path)) sources.set(path, stat ? withStat(sourceOf(path), stat) : sourceOf(path));
				else if (stat) return undefined; // written since (Pi's first answer): discovered in full
			}
			return { sources: [...sources.values()], warnings: [] };
		},
	};
}
