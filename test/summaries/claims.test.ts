/**
 * Summary claims: a session's summaries are made by one process at a time. Two Pi sessions
 * summarizing one workspace's backlog (or `pbot-history summarize` beside Pi) would otherwise pay
 * for every summary twice. The other process is real where it holds a claim (a child process);
 * the model is Pi-AI's faux provider.
 */
import { existsSync, writeFileSync } from "node:fs";
import { fauxAssistantMessage, registerFauxProvider, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { piSummaryModel } from "../../src/integrations/pi/history/piSummaryModel.ts";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import { workspaceCheckpointStore } from "../../src/storage/history-files/checkpoints.ts";
import { workspaceArchiveStore, workspaceSummaryClaims, workspaceTextStore } from "../../src/storage/history-files/index.ts";
import { runSummaryPass } from "../../src/services/history/summaries/summaryWorker.ts";
import { exited, lineFrom, spawnChild } from "../durability/children/spawn.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

const cleanups = foldersRemovedAfter("each");
let faux: FauxProviderRegistration | undefined;
afterEach(() => {
	faux?.unregister();
	faux = undefined;
});

/** The faux model: every call answered, its prompt kept. */
function fauxModel() {
	faux = registerFauxProvider({ provider: "faux-claims", models: [{ id: "sum-1", contextWindow: 128_000, maxTokens: 512 }] });
	const prompts: string[] = [];
	faux.setResponses(
		Array.from({ length: 100 }, () => (context: { messages: { content: unknown }[] }) => {
			const last = context.messages[context.messages.length - 1] as { content: unknown };
			prompts.push(Array.isArray(last.content) ? (last.content as { text?: string }[]).map((b) => b.text ?? "").join("") : String(last.content));
			return fauxAssistantMessage(`summary ${prompts.length}`);
		}),
	);
	return { model: piSummaryModel(faux.getModel(), { apiKey: "k" }), prompts };
}

/** A workspace of two sessions with summaries due, ingested; their ids and the sessions' due counts. */
async function twoSessions(prefix: string) {
	const ws = await generatedWorkspace(prefix);
	cleanups.push(ws.workspace);
	const a = await ws.write(501, { profile: "chat", targetBytes: 12_000, targetQa: 8, startMs: Date.UTC(2026, 3, 1) });
	const b = await ws.write(502, { profile: "chat", targetBytes: 12_000, targetQa: 8, startMs: Date.UTC(2026, 3, 2) });
	const open = () => openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
	await open().refresh();
	const due = await open().summaryBacklog();
	return { ws, a: a.id, b: b.id, due, open };
}

describe("summary claims", () => {
	it("leaves a session whose summaries another process is making to it, and makes the others", { timeout: 30_000 }, async () => {
		const { ws, a, b, due, open } = await twoSessions("pbot-claims-");
		expect(due.get(a)?.due).toBeGreaterThan(0);
		expect(due.get(b)?.due).toBeGreaterThan(0);
		const go = join(ws.workspace, "go");
		const child = spawnChild("summaryClaimChild.ts", [ws.workspace, a, go]);
		await lineFrom(child, "claimed");
		const service = open();
		await service.loadSessions(due.keys());
		const m = fauxModel();
		const report = await runSummaryPass(service.summaryTarget(), m.model, new AbortController().signal);
		// Only b's were made; a's are left to the process that claimed them.
		expect(report.made).toBe(due.get(b)?.due);
		expect(report.remaining).toBe(due.get(a)?.due);
		expect(report.leftToOthers).toBe(due.get(a)?.due);
		const archiveA = service.heldState().sessions[a];
		expect(Object.values(archiveA?.summaries ?? {}).every((s) => s.status === "pending")).toBe(true);
		writeFileSync(go, "");
		expect(await exited(child), child.stderrText()).toMatchObject({ code: 0 });
		// Released: the next pass makes a's.
		const next = await runSummaryPass(service.summaryTarget(), m.model, new AbortController().signal);
		expect(next).toMatchObject({ made: due.get(a)?.due, remaining: 0, leftToOthers: 0 });
	});

	it("does not make again what another process made since this one read the archive", { timeout: 30_000 }, async () => {
		const { a, b, due, open } = await twoSessions("pbot-claims-catchup-");
		// This process holds both archives with their summaries pending…
		const late = open();
		await late.loadSessions(due.keys());
		// …while another makes all of them and stores them.
		const m = fauxModel();
		const other = open();
		await other.loadSessions(due.keys());
		const first = await runSummaryPass(other.summaryTarget(), m.model, new AbortController().signal);
		const all = (due.get(a)?.due ?? 0) + (due.get(b)?.due ?? 0);
		expect(first).toMatchObject({ made: all, remaining: 0 });
		expect(m.prompts).toHaveLength(all);
		// Claiming each session brings its stored summaries in: nothing is due, no call is made.
		const second = await runSummaryPass(late.summaryTarget(), m.model, new AbortController().signal);
		expect(second).toMatchObject({ made: 0, calls: 0, remaining: 0 });
		expect(m.prompts).toHaveLength(all);
		expect(Object.values(late.heldState().sessions[a]?.summaries ?? {}).every((s) => s.status === "ready")).toBe(true);
	});

	it("gives up a session's claim once nothing more is due there, while the pass goes on with the others", { timeout: 30_000 }, async () => {
		const { ws, a, b, due, open } = await twoSessions("pbot-claims-release-");
		const service = open();
		await service.loadSessions(due.keys());
		const m = fauxModel();
		const lockOf = (id: string) => join(ws.workspace, ".pi", "pbot", "history", `${id}.json.summaries.lock`);
		const seen: { made: number; a: boolean; b: boolean }[] = [];
		const report = await runSummaryPass(service.summaryTarget(), m.model, new AbortController().signal, {
			onProgress: (made) => void seen.push({ made, a: existsSync(lockOf(a)), b: existsSync(lockOf(b)) }),
		});
		const dueA = due.get(a)?.due ?? 0;
		expect(report).toMatchObject({ made: dueA + (due.get(b)?.due ?? 0), remaining: 0 });
		// a (the older session) is summarized first: claimed while its summaries are made…
		expect(seen.find((s) => s.made === dueA - 1)).toMatchObject({ a: true, b: false });
		// …and let go as soon as they are, while b's are made.
		expect(seen.find((s) => s.made === dueA + 1)).toMatchObject({ a: false, b: true });
		expect(existsSync(lockOf(a)) || existsSync(lockOf(b))).toBe(false);
	});

	it("reads a claimed session's archive again only when it changed since this process read or wrote it", { timeout: 30_000 }, async () => {
		const { ws, a, due } = await twoSessions("pbot-claims-reads-");
		const reads: string[] = [];
		const inner = workspaceArchiveStore(ws.workspace);
		const service = new HistoryService({
			store: {
				...inner,
				read: (id) => {
					reads.push(id);
					return inner.read(id);
				},
			},
			discovery: fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] }),
			checkpoints: workspaceCheckpointStore(ws.workspace),
			text: workspaceTextStore(ws.workspace),
			summaryClaims: workspaceSummaryClaims(ws.workspace),
		});
		await service.loadSessions(due.keys());
		const loaded = reads.length;
		const target = service.summaryTarget();
		// As this process read it: the claim takes it without reading it again.
		expect(await target.claim?.(a)).toBe(true);
		expect(reads).toHaveLength(loaded);
		await target.releaseClaims?.();
		// Written since by another process: the next claim reads it.
		const other = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
		await other.loadSessions([a]);
		const m = fauxModel();
		await runSummaryPass(
			other.summaryTarget((state) => ({ sessions: { [a]: state.sessions[a] as never } })),
			m.model,
			new AbortController().signal,
		);
		expect(await target.claim?.(a)).toBe(true);
		expect(reads.slice(loaded)).toEqual([a]);
		await target.releaseClaims?.();
	});
});
