/**
 * How the benchmarks put the service together: exactly as `openWorkspaceHistory` does (workspace
 * archive store, file discovery of a named sessions folder, checkpoints), minus the one-time
 * migration from Pi's old location, which would look at the real home folder.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import type { ArchiveStore, SessionDiscovery } from "../../src/services/history/service/ports.ts";
import { workspaceCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { workspaceArchiveStore, workspaceTextStore } from "../../src/storage/history-files/index.ts";

export interface Wired {
	readonly service: HistoryService;
	/** Session files read so far (a warm start should read none). */
	readonly filesRead: () => number;
}

export interface WiringOptions {
	readonly store?: ArchiveStore;
	/** While this returns true, discovery finds no session file (what a refresh reads is then nothing). */
	readonly quiet?: () => boolean;
}

export function workspaceService(workspace: string, sessionsDir: string, options: WiringOptions = {}): Wired {
	let reads = 0;
	const inner = fileDiscovery({ workspace, sessionDirs: [sessionsDir] });
	const discovery: SessionDiscovery = {
		async discover() {
			if (options.quiet?.()) return { sources: [], warnings: [] };
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
	const service = new HistoryService({
		store: options.store ?? workspaceArchiveStore(workspace),
		discovery,
		checkpoints: workspaceCheckpointStore(workspace),
		text: workspaceTextStore(workspace),
	});
	return { service, filesRead: () => reads };
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
