/**
 * A pbot process that ingests a workspace's sessions once, for the crash test (killed at random
 * moments by its parent), ending with a write of the text pack. Prints `ready` once loaded and `done` when finished. It imports no model
 * code, so it starts quickly.
 *   node --import tsx ingestChild.ts <workspace> <sessionsDir>
 */
import { fileDiscovery } from "../../../src/integrations/pi/history/discovery.ts";
import { HistoryService } from "../../../src/services/history/service/historyService.ts";
import { workspaceArchiveStore, workspaceTextStore } from "../../../src/storage/history-files/index.ts";
import { announcingStore } from "./announcingStore.ts";

const [workspace, sessions] = process.argv.slice(2) as [string, string];
const service = new HistoryService({
	store: announcingStore(workspaceArchiveStore(workspace)),
	text: workspaceTextStore(workspace),
	discovery: fileDiscovery({ workspace, sessionDirs: [sessions] }),
	// Packs at the end of every ingest (the default waits for 64 sessions changed): kills land in its writes too.
	packAfter: 1,
});
await service.load();
// The ingest pipeline is imported on the first file read (lazily, for queries): loaded here, so the
// parent's kill moments fall in the ingest's work, not in module loading.
await import("../../../src/services/history/ingest/replayEvents.ts");
process.stdout.write("ready\n");
await service.ingest();
process.stdout.write("done\n");
