import { join, resolve } from "node:path";
import type { IngestLease } from "../../services/history/service/ports.ts";
import { PBOT_DIR } from "./archiveFiles.ts";
import { withFileLock } from "./fileLock.ts";
import { makePbotFolder } from "./paths.ts";

/** `.pi/pbot/ingest.lock`, relative to the workspace: held by the process reading many session files. */
export const INGEST_LOCK_FILE = join(PBOT_DIR, "ingest.lock");
/** How often a holder renews the lease's mtime. */
const HEARTBEAT_MS = 5_000;
/**
 * A lease not renewed for this long is stale, whoever holds it: a holder that died on another
 * host, or a lease copied with the workspace (its pid alive here, but renewing another file).
 * Judging a live holder stale costs only work done twice: the archive writes merge under their
 * own locks either way.
 */
const STALE_MS = 4 * HEARTBEAT_MS;

/**
 * The workspace's ingest lease, across processes: a lock file (`fileLock.ts`) that a process holds
 * while it reads many session files (`runIngest` says when), renewed while held. Another process
 * that would read them too waits for it — two Pi sessions opened in a fresh workspace, or a search
 * during `pbot-history ingest` — instead of reading the same gigabyte at the same time on the same
 * cores, and then finds the files archived. A waiter waits as long as the holder lives and renews
 * the lease; a dead holder's lease is broken at once (same host) or once it is stale.
 */
export function workspaceIngestLease(workspace: string): IngestLease {
	const pbotDir = join(resolve(workspace), PBOT_DIR);
	const lockPath = join(resolve(workspace), INGEST_LOCK_FILE);
	return {
		hold: (run, options = {}) => {
			// The first ingest of a workspace makes `.pi/pbot` (checked: never through a link).
			makePbotFolder(pbotDir);
			return withFileLock(lockPath, run, {
				staleMs: STALE_MS,
				timeoutMs: Number.POSITIVE_INFINITY,
				heartbeatMs: HEARTBEAT_MS,
				...(options.onWait ? { onWait: options.onWait } : {}),
				...(options.signal ? { signal: options.signal } : {}),
			});
		},
	};
}
