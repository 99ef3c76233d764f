import type { SessionArchive } from "../../services/history/archive.ts";
import type { ArchiveStore } from "../../services/history/ports.ts";
import { listArchiveIds, readArchive, writeArchive } from "./archiveFiles.ts";

/** The workspace's `.pi/pbot/history/` as an archive store. */
export function workspaceArchiveStore(workspace: string): ArchiveStore {
	return {
		list: () => listArchiveIds(workspace),
		read: (sessionId) => readArchive(workspace, sessionId),
		write: (archive) => writeArchive(workspace, archive),
	};
}

/** An archive store in memory, for tests and dry runs. Archives are copied in and out, as a file would. */
export function memoryArchiveStore(initial: Iterable<SessionArchive> = []): ArchiveStore & { readonly writes: number } {
	const files = new Map<string, string>();
	for (const a of initial) files.set(a.session.sessionId, JSON.stringify(a));
	let writes = 0;
	return {
		get writes() {
			return writes;
		},
		list: async () => [...files.keys()].sort(),
		read: async (id) => {
			const text = files.get(id);
			return text === undefined ? undefined : (JSON.parse(text) as SessionArchive);
		},
		write: async (archive) => {
			writes++;
			files.set(archive.session.sessionId, JSON.stringify(archive));
		},
	};
}
