import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ArchiveStore, SessionDiscovery } from "../../../services/history/service/ports.ts";
import { migrateOldArchives, oldHistoryDir, type MigrationReport } from "../../../storage/history-files/index.ts";
import { nativeSessionDir } from "./discovery.ts";
import { readSessionHead } from "./sessionFiles.ts";

export type { MigrationReport } from "../../../storage/history-files/index.ts";

export interface WorkspaceMigrationOptions {
	readonly workspace: string;
	/** Pi's agent directory: its `pbot/history/` is the old location, its native session folder is scanned. */
	readonly agentDir: string;
	/** How the workspace's sessions are found (the same discovery the service uses). */
	readonly discovery: SessionDiscovery;
	/** Further folders of the workspace's session files (named by the person or Pi's settings). */
	readonly sessionDirs?: readonly string[];
}

/**
 * Migration on load (docs/archive-format.md, "Older shapes") for a workspace: its session ids are those of the sessions the
 * discovery finds, its session folders Pi's native folder for it, the folders named and those the
 * found files are in. See `migrateOldArchives` for which records are copied.
 */
export async function migrateWorkspaceArchives(options: WorkspaceMigrationOptions): Promise<MigrationReport> {
	const workspace = resolve(options.workspace);
	// Nothing at the old location (the usual case): no second discovery of every session file.
	if (!existsSync(oldHistoryDir(options.agentDir))) return { copied: [], alreadyPresent: [], otherWorkspaces: 0, problems: [] };
	const { sources } = await options.discovery.discover();
	const sessionIds = new Set<string>();
	const sessionDirs = new Set<string>([nativeSessionDir(workspace, options.agentDir), ...(options.sessionDirs ?? []).map((d) => resolve(workspace, d))]);
	for (const source of sources) {
		sessionDirs.add(dirname(source.key));
		const id = source.fallbackSessionId ?? readSessionHead(source.key)?.id;
		if (id) sessionIds.add(id);
	}
	return migrateOldArchives({ workspace, agentDir: options.agentDir, sessionIds, sessionDirs: [...sessionDirs] });
}

/**
 * A store that runs `migrate` once, before its first listing (which the service does when it
 * loads), so records copied from the old location are loaded with the others. A failed migration
 * is reported through `onReport`'s second argument and does not stop loading.
 */
export function migratingArchiveStore<S extends ArchiveStore>(
	store: S,
	migrate: () => Promise<MigrationReport>,
	onReport?: (report: MigrationReport | undefined, error?: Error) => void,
): S {
	let done: Promise<void> | undefined;
	const runOnce = () =>
		(done ??= migrate().then(
			(report) => onReport?.(report),
			(err: Error) => onReport?.(undefined, err),
		));
	return {
		...store,
		list: async () => {
			await runOnce();
			return store.list();
		},
	};
}
