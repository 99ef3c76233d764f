import type { SummaryClaims } from "../../services/history/service/ports.ts";
import { dirname } from "node:path";
import { archivePath } from "./archiveFiles.ts";
import { RUN_LOCK_TIMING, tryFileLock } from "./fileLock.ts";
import { folderScope } from "./paths.ts";

/**
 * The workspace's summary claims: `history/<id>.json.summaries.lock` beside each archive, taken
 * without waiting (`tryFileLock`). A process that finds one held leaves that session's summaries
 * to its holder; a dead holder's claim is broken at once (same host) or once it is stale
 * (`RUN_LOCK_TIMING`: renewed while its summaries are made, which can take a minute of calls).
 */
export function workspaceSummaryClaims(workspace: string): SummaryClaims {
	return {
		claim: (sessionId) => {
			const archive = archivePath(workspace, sessionId);
			return tryFileLock(`${archive}.summaries.lock`, { ...RUN_LOCK_TIMING, scope: folderScope(dirname(archive)) });
		},
	};
}
