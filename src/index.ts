/**
 * pbot-history as a library: the history service of a workspace, wired to its archive folder and
 * its Pi session files, and the types of what it answers. The `pbot-history` command, the
 * `pbot_history` tool and `/pbot history` all call this same service.
 *
 *   import { openWorkspaceHistory } from "pbot-history";
 *   const history = openWorkspaceHistory({ workspace: "/path/to/project" });
 *   const hits = await history.search({ query: "connection pool" });
 *
 * The Pi extension factory, for hosts embedding Pi's SDK, is `pbot-history/pi` (it loads Pi's SDK).
 */
export { openWorkspaceHistory, type WorkspaceHistoryOptions } from "./integrations/pi/history/workspaceHistory.ts";
export type { HistoryService, IngestReport, ProgressListener, SessionIngestReport } from "./services/history/service/historyService.ts";
export type { SessionBacklog } from "./services/history/summaries/backfill.ts";
export { isQueryError, QueryError, type QueryErrorCode } from "./services/history/query/errors.ts";
export type * from "./services/history/query/types.ts";
export type { SessionArchive, SummaryRecord } from "./services/history/projections/archive.ts";
export type { Branch, LineRejection, QaNode, QaPart, SessionFacts } from "./services/history/model/types.ts";
export { ArchiveError, UnsafePbotFolderError } from "./storage/history-files/index.ts";
