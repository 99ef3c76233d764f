import { current, Immer, isDraft, type Draft } from "immer";
import { deepEqual } from "../model/deepEqual.ts";
import type { HistoryEvent, SummaryUsage } from "../model/events.ts";
import type { Branch, LineRejection, QaNode, SessionFacts, SummaryPlan } from "../model/types.ts";

/**
 * Immer without auto-freeze. Freezing deep-froze the whole result of every `produce`, untouched
 * parts included, the first time it met them: every archive `load` brings in was walked (0.4 s of
 * 1.4 s on a 1 GB history), and so was every node an ingest added. Immutability is kept by the
 * `readonly` types and by this reducer being the only writer of the state.
 */
const immer = new Immer({ autoFreeze: false });
const produce = immer.produce;

/** Format tag and version of `.pi/pbot/history/<sessionId>.json` (see docs/archive-format.md). */
export const ARCHIVE_FORMAT = "pbot-history-archive";
export const ARCHIVE_VERSION = 1;
/** Rejected lines kept per session; beyond that they are only counted. */
export const MAX_STORED_REJECTIONS = 200;

/** A planned summary and, once generated, its text and provenance. */
export interface SummaryRecord extends SummaryPlan {
	readonly status: "pending" | "ready";
	readonly text?: string;
	/** `provider/modelId` that wrote the text. */
	readonly model?: string;
	readonly madeAt?: string;
	readonly promptVersion?: string;
	readonly inputHash?: string;
	readonly usage?: SummaryUsage;
	/**
	 * The text was made from inputs that have changed since (a covered Q&A got its answer, a child
	 * summary was regenerated). It stays readable and searchable, and is queued to be made again.
	 */
	readonly stale?: boolean;
	/** The last failed attempt, kept until a text is made. */
	readonly failure?: { readonly error: string; readonly at: string; readonly attempts: number };
}

/** Everything pbot keeps of one native session. No path anywhere. */
export interface SessionArchive {
	readonly format: typeof ARCHIVE_FORMAT;
	readonly version: typeof ARCHIVE_VERSION;
	readonly session: SessionFacts;
	readonly nodes: Readonly<Record<string, QaNode>>;
	readonly summaries: Readonly<Record<string, SummaryRecord>>;
	readonly branches: readonly Branch[];
	readonly rejections: { readonly count: number; readonly lines: readonly LineRejection[] };
}

/** The archives of a workspace, by session id. */
export interface ArchiveState {
	readonly sessions: Readonly<Record<string, SessionArchive>>;
}

export function initialArchiveState(): ArchiveState {
	return { sessions: {} };
}

export function emptySessionArchive(session: SessionFacts): SessionArchive {
	return { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, session, nodes: {}, summaries: {}, branches: [], rejections: { count: 0, lines: [] } };
}

/** Applies a batch of events in one immer `produce` (one copy per batch, not per event). */
export function applyArchiveEvents(state: ArchiveState, events: readonly HistoryEvent[]): ArchiveState {
	return produce(state, (draft) => {
		for (const event of events) evolveArchive(draft, event);
	});
}

/**
 * The archive of a session nothing holds yet, projected from its events by the same reducer on a
 * fresh object. Immer's copy-on-write buys nothing when there is no earlier state to share with,
 * and its finalisation (walking every added node to find drafts, then freezing it) was a fifth of
 * a cold ingest's time.
 */
export function projectNewArchive(events: readonly HistoryEvent[]): ArchiveState {
	const state: ArchiveState = { sessions: {} };
	for (const event of events) evolveArchive(state as Draft<ArchiveState>, event);
	return state;
}

/**
 * The archive reducer. Merging, never replacing wholesale: what was stored and is not contradicted
 * by the file stays (a summary keeps its text when re-planned; a closed Q&A stays even if the
 * native file lost it). Only two things are dropped when a branch set arrives: open Q&A no branch
 * reaches (superseded by the same Q&A with more input) and pending plans no branch reaches.
 */
export function evolveArchive(draft: Draft<ArchiveState>, event: HistoryEvent): void {
	switch (event.type) {
		case "SessionSeen": {
			const { session } = event;
			const existing = draft.sessions[session.sessionId];
			if (!existing) draft.sessions[session.sessionId] = emptySessionArchive(session) as Draft<SessionArchive>;
			else if (!deepEqual(plain(existing.session), session)) existing.session = session as Draft<SessionFacts>;
			return;
		}
		case "QaObserved": {
			const archive = draft.sessions[event.node.sessionId];
			if (!archive) return;
			const existing = archive.nodes[event.node.id];
			// Assign only real changes: an unchanged archive keeps its identity and is not rewritten.
			if (existing && deepEqual(plain(existing), event.node)) return;
			archive.nodes[event.node.id] = event.node as Draft<QaNode>;
			if (existing) markParentsStale(archive, event.node.id);
			return;
		}
		case "SummaryPlanned": {
			const archive = draft.sessions[event.plan.sessionId];
			if (!archive) return;
			const existing = archive.summaries[event.plan.id];
			if (!existing) archive.summaries[event.plan.id] = { ...event.plan, status: "pending" } as Draft<SummaryRecord>;
			else {
				const merged = { ...plain(existing), ...event.plan };
				if (!deepEqual(plain(existing), merged)) archive.summaries[event.plan.id] = merged as Draft<SummaryRecord>;
			}
			return;
		}
		case "BranchesObserved": {
			const archive = draft.sessions[event.sessionId];
			if (!archive) return;
			if (!deepEqual(plain(archive.branches), event.branches)) archive.branches = event.branches as Draft<Branch[]>;
			pruneUnreachable(archive);
			return;
		}
		case "SummaryReady": {
			const archive = draft.sessions[event.sessionId];
			const summary = archive?.summaries[event.id];
			if (!archive || !summary) return;
			if (summary.status === "ready" && summary.text !== event.text) markParentsStale(archive, event.id);
			delete summary.stale;
			summary.status = "ready";
			summary.text = event.text;
			summary.model = event.model;
			summary.madeAt = event.at;
			if (event.promptVersion !== undefined) summary.promptVersion = event.promptVersion;
			if (event.inputHash !== undefined) summary.inputHash = event.inputHash;
			if (event.usage !== undefined) summary.usage = event.usage;
			delete summary.failure;
			return;
		}
		case "SummaryMarkedStale": {
			const summary = draft.sessions[event.sessionId]?.summaries[event.id];
			if (summary?.status === "ready" && summary.stale !== true) summary.stale = true;
			return;
		}
		case "SummaryFailed": {
			const summary = draft.sessions[event.sessionId]?.summaries[event.id];
			if (!summary) return;
			summary.failure = { error: event.error, at: event.at, attempts: (summary.failure?.attempts ?? 0) + 1 };
			return;
		}
		case "LineRejected": {
			const archive = event.sessionId ? draft.sessions[event.sessionId] : undefined;
			if (!archive) return;
			const { lines } = archive.rejections;
			if (lines.some((l) => l.line === event.rejection.line)) return;
			archive.rejections.count++;
			if (lines.length < MAX_STORED_REJECTIONS) lines.push(event.rejection);
			return;
		}
	}
}

/** Ready summaries over a node whose content changed are stale: readable, and due again. */
function markParentsStale(archive: Draft<SessionArchive>, childId: string): void {
	for (const summary of Object.values(archive.summaries)) {
		if (summary.status === "ready" && summary.stale !== true && summary.childIds.includes(childId)) summary.stale = true;
	}
}

/** The plain value behind a draft (unmodified drafts give their base without copying). */
function plain<T>(value: T): T {
	return isDraft(value) ? (current(value as Draft<T>) as T) : value;
}

function pruneUnreachable(archive: Draft<SessionArchive>): void {
	const reachable = new Set<string>();
	for (const branch of archive.branches) for (const id of branch.nodeIds) reachable.add(id);
	// Plans come level by level; a plan is reachable when its children are.
	const summaries = Object.values(archive.summaries).sort((a, b) => a.level - b.level);
	for (const s of summaries) if (s.childIds.every((c) => reachable.has(c))) reachable.add(s.id);
	for (const [id, node] of Object.entries(archive.nodes)) if (!node.completed && !reachable.has(id)) delete archive.nodes[id];
	for (const s of summaries) if (s.status === "pending" && !reachable.has(s.id)) delete archive.summaries[s.id];
}

/** The events that rebuild an archive: replaying them into an empty state gives it back. */
export function archiveEvents(archive: SessionArchive): HistoryEvent[] {
	const sessionId = archive.session.sessionId;
	const events: HistoryEvent[] = [{ type: "SessionSeen", session: archive.session }];
	for (const rejection of archive.rejections.lines) events.push({ type: "LineRejected", sessionId, rejection });
	for (const node of Object.values(archive.nodes)) events.push({ type: "QaObserved", node });
	const summaries = Object.values(archive.summaries).sort((a, b) => a.level - b.level);
	for (const s of summaries) {
		const { status, text, model, madeAt, promptVersion, inputHash, usage, failure, stale, ...plan } = s;
		events.push({ type: "SummaryPlanned", plan });
		if (status === "ready" && text !== undefined) {
			events.push({
				type: "SummaryReady",
				sessionId,
				id: s.id,
				text,
				model: model ?? "unknown",
				at: madeAt ?? s.endedAt,
				...(promptVersion !== undefined ? { promptVersion } : {}),
				...(inputHash !== undefined ? { inputHash } : {}),
				...(usage !== undefined ? { usage } : {}),
			});
			if (stale) events.push({ type: "SummaryMarkedStale", sessionId, id: s.id });
		}
		if (failure) {
			for (let attempt = 0; attempt < failure.attempts; attempt++)
				events.push({ type: "SummaryFailed", sessionId, id: s.id, error: failure.error, at: failure.at });
		}
	}
	events.push({ type: "BranchesObserved", sessionId, branches: archive.branches });
	return events;
}
