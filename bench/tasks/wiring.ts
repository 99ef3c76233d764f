/**
 * How the benchmarks put the service together: exactly as `openWorkspaceHistory` does (workspace
 * archive store, file discovery of a named sessions folder, checkpoints), minus the one-time
 * migration from Pi's old location, which would look at the real home folder.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import type { SessionArchive } from "../../src/services/history/archive.ts";
import { HistoryService } from "../../src/services/history/historyService.ts";
import type { ArchiveStore, SessionDiscovery } from "../../src/services/history/ports.ts";
import { workspaceCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { historyDir, workspaceArchiveStore } from "../../src/storage/history-files/index.ts";

export interface Wired {
	readonly service: HistoryService;
	/** Session files read so far (a warm start should read none). */
	readonly filesRead: () => number;
}

export function workspaceService(workspace: string, sessionsDir: string, options: { store?: ArchiveStore } = {}): Wired {
	let reads = 0;
	const inner = fileDiscovery({ workspace, sessionDirs: [sessionsDir] });
	const discovery: SessionDiscovery = {
		async discover() {
			const found = await inner.discover();
			return {
				warnings: found.warnings,
				sources: found.sources.map((s) => ({
					...s,
					read: (onState) => {
						reads++;
						return s.read(onState);
					},
				})),
			};
		},
	};
	const service = new HistoryService({ store: options.store ?? workspaceArchiveStore(workspace), discovery, checkpoints: workspaceCheckpointStore(workspace) });
	return { service, filesRead: () => reads };
}

/** An archive store that keeps nothing: for the search corpora, whose archives are never read back. */
export function discardingStore(): ArchiveStore {
	return { list: async () => [], read: async () => undefined, write: async () => undefined };
}

/** Bytes of the archive files in a workspace. */
export function archiveBytes(workspace: string): number {
	const dir = historyDir(workspace);
	let total = 0;
	for (const name of readdirSync(dir)) if (name.endsWith(".json")) total += statSync(join(dir, name)).size;
	return total;
}

/** UTF-8 bytes of the text the archives hold for search: Q&A parts and summary texts. */
export function archivedTextBytes(sessions: Readonly<Record<string, SessionArchive>>): { bytes: number; qa: number } {
	let bytes = 0;
	let qa = 0;
	for (const archive of Object.values(sessions)) {
		for (const node of Object.values(archive.nodes)) {
			qa++;
			for (const part of node.parts) bytes += Buffer.byteLength(part.text);
		}
		for (const s of Object.values(archive.summaries)) if (s.text) bytes += Buffer.byteLength(s.text);
	}
	return { bytes, qa };
}

/** Total bytes of the `.jsonl` files in a folder. */
export function folderBytes(dir: string): { files: string[]; bytes: number } {
	const files = readdirSync(dir)
		.filter((n) => n.endsWith(".jsonl"))
		.sort()
		.map((n) => join(dir, n));
	let bytes = 0;
	for (const f of files) bytes += statSync(f).size;
	return { files, bytes };
}

export function peakRss(): number {
	return process.resourceUsage().maxRSS * 1024;
}
