/**
 * What a person reads under an empty answer (or an ingest that found nothing) when the workspace
 * has no session at all: which workspace, and where its sessions were looked for. A first run in
 * the wrong folder otherwise only said "No sessions found." Text output only: `--json` is the
 * service's answer alone.
 */
import type { HistoryService } from "../services/history/service/historyService.ts";
import { formatEmptyHistory } from "./queryFormat.ts";
import type { WorkspaceOptions } from "./workspaceOptions.ts";
import { sessionFoldersOf } from "./workspaceService.ts";

/** The note (with the blank line before it), or `""` when the history has any session (the filters or the words found nothing). */
export async function emptyHistoryNote(service: HistoryService, opts: WorkspaceOptions, cwd: string): Promise<string> {
	if ((await service.sessions({ limit: 0 })).total > 0) return "";
	return `\n\n${formatEmptyHistory(sessionFoldersOf(opts, cwd), (opts.sessions?.length ?? 0) > 0)}`;
}
