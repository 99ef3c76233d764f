import type { SummaryClaims } from "../../services/history/service/ports.ts";
import { dirname } from "node:path";
import { archivePath } from "./archiveFiles.ts";
import { tryFileLock } from "./fileLock.ts";
import { folderScope } from "./paths.ts";

/** How often a claim's mtime is renewed while its summaries are made (a summary can take a minute of calls). */
const HEARTBEAT_MS = 5_000;
/** A claim not renewed for this long is stale (a holder on another host, a copied workspace). */
const STALE_MS = 4 * HEARTBEAT_MS;

/**
 * The workspace's summary claims: `history/<id>.json.summaries.lock` beside each archive, taken
 * without waiting (`tryFileLock`). A process that finds one held leaves that session's summaries
 * to its holder; a dead holder's claim is broken at once (same host) or once it is stale.
 */
export function workspaceSummaryClaims(workspace: string): SummaryClaims {
	return {
		claim: (sessionId) => {
			const archive = archivePath(workspace, sessionId);
			return tryFileLock(`${archive}.summaries.lock`, { staleMs: STALE_MS, heartbeatMs: HEARTBEAT_MS, scope: folderScope(dirname(archive)) });
		},
	};
}
