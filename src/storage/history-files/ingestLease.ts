import { join, resolve } from "node:path";
import type { IngestLease } from "../../services/history/service/ports.ts";
import { PBOT_DIR } from "./archiveFiles.ts";
import { RUN_LOCK_TIMING, withFileLock } from "./fileLock.ts";
import { folderScope, makePbotFolder } from "./paths.ts";

/** `.pi/pbot/ingest.lock`, relative to the workspace: held by the process reading many session files. */
export const INGEST_LOCK_FILE = join(PBOT_DIR, "ingest.lock");
/**
 * The longest wait for a live holder. Longer than any ingest of a real history here (1 GB: 6 s), so
 * it ends only a wait on a holder that renews the lease but never finishes (a bug, a process
 * stopped in a debugger): the waiter then reads the files itself, as it did before leases, rather
 * than hang a person's query for good.
 */
const WAIT_AT_MOST_MS = 3 * 60_000;

/**
 * The workspace's ingest lease, across processes: a lock file (`fileLock.ts`) that a process holds
 * while it reads many session files (`runIngest` says when), renewed while held. Another process
 * that would read them too waits for it — two Pi sessions opened in a fresh workspace, or a search
 * during `pbot-history ingest` — instead of reading the same gigabyte at the same time on the same
 * cores, and then finds the files archived. A waiter waits while the holder lives and renews the
 * lease (`RUN_LOCK_TIMING`), up to `WAIT_AT_MOST_MS`; a dead holder's lease is broken at once (same
 * host) or once it is stale. Judging a live holder stale costs only work done twice: the archive
 * writes merge under their own locks either way.
 */
export function workspaceIngestLease(workspace: string, limits: { readonly waitAtMostMs?: number } = {}): IngestLease {
	const pbotDir = join(resolve(workspace), PBOT_DIR);
	const lockPath = join(resolve(workspace), INGEST_LOCK_FILE);
	return {
		hold: (run, options = {}) => {
			// The first ingest of a workspace makes `.pi/pbot` (checked: never through a link).
			makePbotFolder(pbotDir);
			return withFileLock(lockPath, run, {
				scope: folderScope(pbotDir),
				...RUN_LOCK_TIMING,
				timeoutMs: limits.waitAtMostMs ?? WAIT_AT_MOST_MS,
				...(options.onWait ? { onWait: options.onWait } : {}),
				...(options.signal ? { signal: options.signal } : {}),
			});
		},
	};
}
