/**
 * Test helpers for the query service: archives and views made from the real Pi fixtures through
 * the real pipeline, plus temporary workspaces for service and CLI tests.
 */
import { readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyArchiveEvents, initialArchiveState, type ArchiveState, type SummaryRecord } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent, SummaryReady } from "../../src/services/history/model/events.ts";
import { buildQueryView, type QueryView } from "../../src/services/history/projections/queryView.ts";
import { sessionIdFromFileName } from "../../src/services/history/model/sessionFileName.ts";
import type { QaNode } from "../../src/services/history/model/types.ts";
import { QueryError } from "../../src/services/history/query/errors.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { replayEvents } from "../helpers/entries.ts";

export const FIXTURES_DIR = fileURLToPath(new URL("../../fixtures/sessions", import.meta.url));

interface FixtureIndex {
	readonly sessions: Record<string, { readonly file: string; readonly origin: string; readonly facts?: Record<string, unknown> }>;
}

export const fixtureIndex = JSON.parse(readFileSync(join(FIXTURES_DIR, "index.json"), "utf8")) as FixtureIndex;

/** Keys of the fixtures Pi's SDK wrote (not the derived legacy/damaged copies). */
export const NATIVE_KEYS = Object.entries(fixtureIndex.sessions)
	.filter(([, f]) => f.origin === "pi-sdk")
	.map(([key]) => key);

export function fixtureFile(key: string): string {
	const entry = fixtureIndex.sessions[key];
	if (!entry) throw new Error(`no fixture ${key}`);
	return entry.file;
}

export function fixtureSessionId(key: string): string {
	return sessionIdFromFileName(fixtureFile(key)) as string;
}

/** The events of a fixture file, through the whole ingestion pipeline. */
export async function fixtureEvents(key: string): Promise<HistoryEvent[]> {
	const file = fixtureFile(key);
	return replayEvents(new Uint8Array(readFileSync(join(FIXTURES_DIR, file))), sessionIdFromFileName(file));
}

/** The archive state of the given fixtures (plus extra events, e.g. summaries made ready). */
export async function fixtureState(keys: readonly string[], extra: readonly HistoryEvent[] = []): Promise<ArchiveState> {
	const events: HistoryEvent[] = [];
	for (const key of keys) events.push(...(await fixtureEvents(key)));
	return applyArchiveEvents(initialArchiveState(), [...events, ...extra]);
}

export async function fixtureView(keys: readonly string[], extra: readonly HistoryEvent[] = []): Promise<QueryView> {
	return buildQueryView(await fixtureState(keys, extra));
}

/** Views from builder-made session bytes (see test/helpers/entries.ts). */
export async function bytesView(files: readonly Uint8Array[], extra: readonly HistoryEvent[] = []): Promise<QueryView> {
	const events: HistoryEvent[] = [];
	for (const bytes of files) events.push(...(await replayEvents(bytes)));
	return buildQueryView(applyArchiveEvents(initialArchiveState(), [...events, ...extra]));
}

/** Adds events to a view's state (a summary made ready, …) and rebuilds the view. */
export function withEvents(view: QueryView, events: readonly HistoryEvent[]): QueryView {
	return buildQueryView(applyArchiveEvents(view.state, events), view);
}

/** A `SummaryReady` event, as the (later) summary generator will emit it. */
export function summaryReady(summary: Pick<SummaryRecord, "id" | "sessionId">, text: string): SummaryReady {
	return { type: "SummaryReady", sessionId: summary.sessionId, id: summary.id, text, model: "test/model", at: "2026-04-01T00:00:00.000Z" };
}

export function qaNodes(view: QueryView, sessionId: string): QaNode[] {
	return Object.values(view.state.sessions[sessionId]?.nodes ?? {});
}

/** Summaries of a session at one level, in the order of the Q&A they cover. */
export function summariesAt(view: QueryView, sessionId: string, level: number): SummaryRecord[] {
	return Object.values(view.state.sessions[sessionId]?.summaries ?? {})
		.filter((s) => s.level === level)
		.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || (a.id < b.id ? -1 : 1));
}

/** The Q&A whose first input contains `text` (exactly one). */
export function qaByQuestion(view: QueryView, sessionId: string, text: string): QaNode {
	const found = qaNodes(view, sessionId).filter((q) => q.parts[0]?.text.includes(text));
	if (found.length !== 1) throw new Error(`${found.length} Q&A ask ${JSON.stringify(text)}`);
	return found[0] as QaNode;
}

/** The plain text a Q&A is searched in (independent of the implementation under test). */
export function qaText(qa: QaNode): string {
	return qa.parts.map((p) => p.text).join("\n");
}

/** A temporary workspace whose `sessions/` holds copies of the given fixtures. */
export async function fixtureWorkspace(keys: readonly string[]): Promise<{ workspace: string; sessions: string; agentDir: string }> {
	const workspace = await mkdtemp(join(tmpdir(), "pbot-query-"));
	const sessions = join(workspace, "sessions");
	const agentDir = join(workspace, "agent");
	await mkdir(sessions, { recursive: true });
	await mkdir(agentDir, { recursive: true });
	for (const key of keys) await cp(join(FIXTURES_DIR, fixtureFile(key)), join(sessions, fixtureFile(key)));
	return { workspace, sessions, agentDir };
}

/**
 * A fixture workspace ingested through the workspace's own service, and `open()` for a new
 * service on it each time (as a new process would be). `cleanups` gets the folder to remove.
 */
export async function ingestedFixtureWorkspace(
	keys: readonly string[],
	cleanups: string[],
): Promise<{ workspace: string; sessions: string; agentDir: string; open: () => HistoryService }> {
	const ws = await fixtureWorkspace(keys);
	cleanups.push(ws.workspace);
	const open = () => openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
	await open().ingest();
	return { ...ws, open };
}

/** No lone surrogate (String.prototype.isWellFormed is ES2024; the project's lib is ES2023). */
export function isWellFormed(text: string): boolean {
	return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/** The `QueryError` a call throws (anything else fails the test). */
export function errorOf(fn: () => unknown): QueryError {
	try {
		fn();
	} catch (err) {
		if (err instanceof QueryError) return err;
		throw err;
	}
	throw new Error("no error thrown");
}
