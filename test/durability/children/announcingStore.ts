import type { ArchiveStore } from "../../../src/services/history/service/ports.ts";

/**
 * The store of a child process, saying `write` on stdout as each archive write starts, so that
 * its parent can aim some kills at the inside of a write (read, merge, temporary file, fsync,
 * rename) rather than at the reading that takes most of a run.
 */
export function announcingStore(store: ArchiveStore): ArchiveStore {
	return {
		...store,
		write: async (archive, options) => {
			process.stdout.write("write\n");
			return store.write(archive, options);
		},
	};
}
