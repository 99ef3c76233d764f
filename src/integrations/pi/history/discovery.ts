import { type Stats, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { isInside, pathExists } from "../../../storage/history-files/index.ts";
import type { SessionDiscovery, SessionSource } from "../../../services/history/service/ports.ts";
import { sessionIdFromFileName } from "../../../services/history/model/sessionFileName.ts";
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
}

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
 * its path) and its header, kept while the file is the same file (inode) and has not shrunk. Pi
 * appends to a session file and never changes its header's `cwd`, `id` or `parentSession`; a
 * query in Pi discovers again every time, and reading every header of a large session folder each
 * time cost more than the rest of the query.
 */
const knownSources = new Map<string, SessionSource>();
const knownHeads = new Map<string, { readonly ino: number; readonly size: number; readonly head: SessionHead | undefined }>();

function sourceOf(path: string): SessionSource {
	let source = knownSources.get(path);
	if (!source) knownSources.set(path, (source = sessionFileSource(path)));
	return source;
}

/** A file's header (from memory while it is the same file) and the `stat` taken to know that. */
async function headOf(path: string): Promise<{ head: SessionHead | undefined; stat: Stats | undefined }> {
	const stat = statSync(path, { throwIfNoEntry: false });
	const known = knownHeads.get(path);
	if (stat && known && known.ino === stat.ino && stat.size >= known.size && known.head !== undefined) return { head: known.head, stat };
	const head = await readSessionHead(path);
	if (stat) knownHeads.set(path, { ino: stat.ino, size: stat.size, head });
	return { head, stat };
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
			const listing = async (dir: string): Promise<string[]> => {
				try {
					return await listSessionFiles(dir);
				} catch (err) {
					warnings.push(`session folder ${dir} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): its sessions are left out`);
					return [];
				}
			};

			// Pi names the current file before it writes it (with the first answer): a file that
			// does not exist yet is skipped without a word.
			for (const file of options.files ?? []) {
				const path = resolve(workspace, file);
				if (await pathExists(path)) take(path);
			}
			for (const dir of options.sessionDirs ?? []) for (const file of await listing(resolve(workspace, dir))) take(file);

			const scan = [...(options.scanDirs ?? []).map((d) => resolve(workspace, d))];
			if (options.agentDir) scan.push(nativeSessionDir(workspace, options.agentDir));
			const heads = new Map<string, SessionHead>();
			const stats = new Map<string, Stats>();
			for (const dir of new Set(scan)) {
				for (const file of await listing(dir)) {
					if (chosen.has(file)) continue;
					const { head, stat } = await headOf(file);
					if (head) heads.set(file, head);
					if (stat) stats.set(file, stat);
				}
			}
			// Workspace sessions first, then, until nothing changes, forks of what was taken.
			const takenIds = new Set<string>();
			for (const source of chosen.values()) if (source.fallbackSessionId) takenIds.add(source.fallbackSessionId);
			for (const [file, head] of heads) {
				if (head.cwd !== undefined && isInside(head.cwd, workspace)) {
					take(file);
					if (head.id) takenIds.add(head.id);
				}
			}
			for (let changed = true; changed; ) {
				changed = false;
				for (const [file, head] of heads) {
					if (chosen.has(file) || !head.parentSession) continue;
					const parentId = sessionIdFromFileName(head.parentSession);
					if (parentId && takenIds.has(parentId)) {
						take(file);
						if (head.id) takenIds.add(head.id);
						changed = true;
					}
				}
			}
			const sources = [...chosen].map(([path, source]) => {
				const stat = stats.get(path);
				return stat ? withStat(source, stat) : source;
			});
			return { sources, warnings };
		},
	};
}
