/**
 * A pbot process that summarizes, for the crash and two-writer tests (killed at random moments by
 * its parent). `ingestChild.ts` is the ingesting one.
 *
 *   node --import tsx summarizeChild.ts summarize <workspace>
 *   node --import tsx summarizeChild.ts writer    <workspace> <sessionsDir> <name> <stopFile>
 *
 * `summarize` runs the summary worker (`runSummaryPass`) with pi-ai's faux provider until nothing is due; its texts depend only on the
 * prompt and its clock is pinned, so a clean run gives the same archive. `writer` alternates
 * refreshing and summarizing until `stopFile` exists, then refreshes once more; its texts name
 * the writer, its clock is real, and every summary it stores is printed (`made <session> <id>`).
 * Each prints `ready` once loaded and `done` when finished.
 */
import { existsSync } from "node:fs";
import { fileDiscovery } from "../../../src/integrations/pi/history/discovery.ts";
import type { HistoryEvent } from "../../../src/services/history/model/events.ts";
import { HistoryService } from "../../../src/services/history/service/historyService.ts";
import type { SessionDiscovery } from "../../../src/services/history/service/ports.ts";
import { runSummaryPass } from "../../../src/services/history/summaries/summaryWorker.ts";
import { workspaceArchiveStore, workspaceTextStore } from "../../../src/storage/history-files/index.ts";
import { announcingStore } from "./announcingStore.ts";
import { fauxSummaryModel, PINNED_NOW } from "./shared.ts";

const [mode, workspace, sessions, name = "child", stopFile = ""] = process.argv.slice(2) as [string, string, string?, string?, string?];

const nothing: SessionDiscovery = { discover: async () => ({ sources: [], warnings: [] }) };
const discovery = sessions ? fileDiscovery({ workspace, sessionDirs: [sessions] }) : nothing;
const service = new HistoryService({ store: announcingStore(workspaceArchiveStore(workspace)), text: workspaceTextStore(workspace), discovery });

async function summarize(tag: string, now: () => Date, onStored?: (e: HistoryEvent) => void) {
	const target = {
		state: () => service.archiveState(),
		applyEvents: async (events: readonly HistoryEvent[]) => {
			await service.applyEvents(events);
			for (const e of events) onStored?.(e);
		},
	};
	return runSummaryPass(target, fauxSummaryModel(tag), new AbortController().signal, { now, maxAttemptsPerSummary: 1 });
}

await service.load();
process.stdout.write("ready\n");
if (mode === "summarize") {
	await summarize("clean", () => PINNED_NOW);
} else if (mode === "writer") {
	const report = (e: HistoryEvent) => {
		if (e.type === "SummaryReady") process.stdout.write(`made ${e.sessionId} ${e.id}\n`);
	};
	for (;;) {
		const stopping = existsSync(stopFile);
		await service.refresh();
		await summarize(name, () => new Date(), report);
		if (stopping) break;
		await new Promise((r) => setTimeout(r, 5));
	}
} else {
	throw new Error(`unknown mode ${mode}`);
}
process.stdout.write("done\n");
