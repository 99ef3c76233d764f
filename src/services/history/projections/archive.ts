import { current, Immer, isDraft, type Draft } from "immer";
import { deepEqual } from "../model/deepEqual.ts";
import { type HistoryEvent, sessionOfEvent, type SummaryUsage } from "../model/events.ts";
import { pruneUnreachable } from "./reachable.ts";
import type { Branch, LineRejection, QaNode, SessionFacts, SummaryPlan } from "../model/types.ts";

/**
 * Immer without auto-freeze. Measured before each session got a `produce` of its own: freezing
 * deep-froze every archive the first time a `produce` met it (0.4 s of loading a 1 GB history),
 * and finalising a new session walked and froze every added node (a fifth of a cold ingest). Now
 * only the archives that change meet immer; not measured again yet, so it stays off. Immutability
 * is kept by the `readonly` types and by this reducer being the only writer of an archive.
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

/**
 * The archives of a workspace, by session id, as the query and summary modules read them: a
 * snapshot (the service keeps its archives in a `Map` and makes this record when asked).
 */
export interface ArchiveState {
	readonly sessions: Readonly<Record<string, SessionArchive>>;
}

export function initialArchiveState(): ArchiveState {
	return { sessions: {} };
}

export function emptySessionArchive(session: SessionFacts): SessionArchive {
	return { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, session, nodes: {}, summaries: {}, branches: [], rejections: { count: 0, lines: [] } };
}

/**
 * One session's events applied to its archive in one immer `produce` (one copy per batch, not per
 * event): the document is the session archive, `evolve` the reducer. Without an archive, events
 * before the session's `SessionSeen` are ignored and the archive starts empty there. Returns the
 * same archive when nothing changed (so nothing is written), `undefined` when there is still none.
 */
export function evolveSession(archive: SessionArchive | undefined, events: readonly HistoryEvent[]): SessionArchive | undefined {
	let base = archive;
	let from = 0;
	if (!base) {
		from = events.findIndex((e) => e.type === "SessionSeen");
		const seen = events[from];
		if (seen?.type !== "SessionSeen") return undefined;
		base = emptySessionArchive(seen.session);
		from++;
	}
	if (from >= events.length) return base;
	if (!archive) {
		// A new archive is this call's own, shared with nothing: the events are applied to it as it
		// is. A draft and immer's finalising walk over every value put in buy nothing here, and were
		// a tenth of a first ingest's time (`isDraftable`, `handleValue`, `each` over every Q&A).
		for (let i = from; i < events.length; i++) evolve(base as Draft<SessionArchive>, events[i] as HistoryEvent);
		return base;
	}
	return produce(base, (draft) => {
		for (let i = from; i < events.length; i++) evolve(draft, events[i] as HistoryEvent);
	});
}

/**
 * A workspace's events applied to its archives, each session in one `produce` of its own (the
 * reducer only touches the session an event names, so the order between sessions does not
 * matter). The same state when nothing changed. What tests and replays fold events with; the
 * service keeps its archives in a map and calls `evolveSession` itself.
 */
export function applyArchiveEvents(state: ArchiveState, events: readonly HistoryEvent[]): ArchiveState {
	const changed: Record<string, SessionArchive> = {};
	let any = false;
	for (const [sessionId, own] of eventsBySession(events)) {
		const before = state.sessions[sessionId];
		const after = evolveSession(before, own);
		if (after === undefined || after === before) continue;
		changed[sessionId] = after;
		any = true;
	}
	return any ? { sessions: { ...state.sessions, ...changed } } : state;
}

/** Events grouped by the session they are about, each group in its original order. */
export function eventsBySession(events: readonly HistoryEvent[]): Map<string, HistoryEvent[]> {
	const out = new Map<string, HistoryEvent[]>();
	for (const event of events) {
		const id = sessionOfEvent(event);
		if (id === undefined) continue;
		const list = out.get(id);
		if (list) list.push(event);
		else out.set(id, [event]);
	}
	return out;
}

/**
 * The archive reducer, for one session's archive (the event is about it). Merging, never
 * replacing wholesale: what was stored and is not contradicted by the file stays (a summary keeps
 * its text when re-planned; a closed Q&A stays even if the native file lost it). Only two things
 * are dropped when a branch set arrives: open Q&A no branch reaches (superseded by the same Q&A
 * with more input) and pending plans no branch reaches.
 */
export function evolve(archive: Draft<SessionArchive>, event: HistoryEvent): void {
	switch (event.type) {
		case "SessionSeen": {
			if (!deepEqual(plain(archive.session), event.session)) archive.session = event.session as Draft<SessionFacts>;
			return;
		}
		case "QaObserved": {
			const existing = archive.nodes[event.node.id];
			// Assign only real changes: an unchanged archive keeps its identity and is not rewritten.
			if (existing && deepEqual(plain(existing), event.node)) return;
			archive.nodes[event.node.id] = event.node as Draft<QaNode>;
			if (existing) markParentsStale(archive, event.node.id);
			return;
		}
		case "SummaryPlanned": {
			const existing = archive.summaries[event.plan.id];
			if (!existing) archive.summaries[event.plan.id] = { ...event.plan, status: "pending" } as Draft<SummaryRecord>;
			else {
				const merged = { ...plain(existing), ...event.plan };
				if (!deepEqual(plain(existing), merged)) archive.summaries[event.plan.id] = merged as Draft<SummaryRecord>;
			}
			return;
		}
		case "BranchesObserved": {
			if (!deepEqual(plain(archive.branches), event.branches)) archive.branches = event.branches as Draft<Branch[]>;
			pruneUnreachable(archive.nodes, archive.summaries, archive.branches);
			return;
		}
		case "SummaryReady": {
			const summary = archive.summaries[event.id];
			if (!summary) return;
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
			const summary = archive.summaries[event.id];
			if (summary?.status === "ready" && summary.stale !== true) summary.stale = true;
			return;
		}
		case "SummaryFailed": {
			const summary = archive.summaries[event.id];
			if (!summary) return;
			summary.failure = { error: event.error, at: event.at, attempts: (summary.failure?.attempts ?? 0) + 1 };
			return;
		}
		case "LineRejected": {
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
