import { ARCHIVE_FORMAT, ARCHIVE_VERSION, type SessionArchive, type SummaryRecord } from "../../services/history/projections/archive.ts";
import { sessionIdFromFileName } from "../../services/history/model/sessionFileName.ts";
import type { LineRejection, QaNode, SessionFacts } from "../../services/history/model/types.ts";

/**
 * Reading archives written by earlier pbot versions: the shapes accepted, and what is dropped on the
 * way (docs/archive-format.md, "Older shapes").
 */

/**
 * Why an archive cannot be used: `damaged` (not JSON, not an object, not naming its session),
 * `format` (another program's file), `version` (a newer pbot's), `id` (an invalid session id).
 */
export type ArchiveErrorCode = "damaged" | "format" | "version" | "id";

/**
 * Raised for an archive that cannot be used. A damaged one read through `readArchive` or
 * `readArchiveWithRevision` has been moved aside (`quarantined` names where its bytes are kept);
 * any other is left as it is.
 */
export class ArchiveError extends Error {
	override readonly name = "ArchiveError";
	constructor(
		message: string,
		readonly code: ArchiveErrorCode = "damaged",
		readonly quarantined?: string,
		/** For `version`: what could still be read of it (`ArchiveReadProblem.newer`). */
		readonly newer?: { readonly version: number; readonly session: SessionFacts },
	) {
		super(message);
	}
}

/**
 * Fields of older archives that hold a path (the native session file, the workspace, Pi's cwd).
 * They are read for deciding where a record belongs, and never written again.
 */
export const LEGACY_PATH_FIELDS = ["file", "path", "filePath", "sessionFile", "sessionDir", "cwd", "workspace"] as const;

/** The paths an older archive recorded, read before they are dropped. */
export interface LegacyPaths {
	/** `file`, `path`, `filePath`, `sessionFile`: the native session file. */
	readonly files: readonly string[];
	/** `cwd`, `workspace`: the workspace the session ran in. */
	readonly workspaces: readonly string[];
	/** `sessionDir`: the folder the native file was in. */
	readonly sessionDirs: readonly string[];
}

export interface UpcastResult {
	readonly archive: SessionArchive;
	/** Names of the path fields found (e.g. `file`, `session.cwd`); empty for a current archive. */
	readonly legacyFields: readonly string[];
	readonly paths: LegacyPaths;
}

export interface UpcastOptions {
	/** The id the archive must have (its file name). */
	readonly expectedId?: string;
	/**
	 * Also accept the loosest older shapes (no `format`, no `version`, the session id at the top
	 * level) and drop Q&A and summaries that do not have the current shape. For records from the
	 * old location; a workspace archive must carry the format tag.
	 */
	readonly lenient?: boolean;
}

/** Turns the parsed JSON of an archive (current or older) into the current shape. */
export function upcastArchive(value: unknown, options: UpcastOptions = {}): UpcastResult {
	const label = options.expectedId ?? "";
	if (!isObject(value)) throw new ArchiveError(`archive ${label} is not an object`);
	const format = value.format;
	if (format !== ARCHIVE_FORMAT && !(options.lenient && format === undefined)) {
		throw new ArchiveError(`archive ${label} has format ${JSON.stringify(format)}, expected ${ARCHIVE_FORMAT}`, "format");
	}
	const version = value.version;
	const versionOk = typeof version === "number" ? version <= ARCHIVE_VERSION : options.lenient === true && version === undefined;
	if (!versionOk) {
		// A newer pbot's: never overwritten; listed from the facts it shares with ours, where it has them.
		const session = isObject(value.session) ? value.session : {};
		const facts =
			typeof version === "number" && typeof session.sessionId === "string" && (options.expectedId === undefined || session.sessionId === options.expectedId)
				? {
						version,
						session: {
							sessionId: session.sessionId,
							version: 3,
							startedAt: typeof session.startedAt === "string" ? session.startedAt : new Date(0).toISOString(),
							...(typeof session.name === "string" ? { name: session.name } : {}),
						},
					}
				: undefined;
		throw new ArchiveError(
			`archive ${label} has version ${String(version)}; this pbot reads up to ${ARCHIVE_VERSION} (update pbot-history to read it)`,
			"version",
			undefined,
			facts,
		);
	}

	const rawSession = isObject(value.session) ? value.session : {};
	const sessionId = rawSession.sessionId ?? (options.lenient ? (value.sessionId ?? value.id) : undefined);
	if (typeof sessionId !== "string" || (options.expectedId !== undefined && sessionId !== options.expectedId)) {
		throw new ArchiveError(`archive ${label} names session ${JSON.stringify(sessionId)}`);
	}

	const legacyFields: string[] = [];
	const files: string[] = [];
	const workspaces: string[] = [];
	const sessionDirs: string[] = [];
	const collect = (where: Record<string, unknown>, prefix: string) => {
		for (const field of LEGACY_PATH_FIELDS) {
			const v = where[field];
			if (v === undefined) continue;
			legacyFields.push(prefix + field);
			if (typeof v !== "string") continue;
			if (field === "cwd" || field === "workspace") workspaces.push(v);
			else if (field === "sessionDir") sessionDirs.push(v);
			else files.push(v);
		}
	};
	collect(value, "");
	collect(rawSession, "session.");

	const rawNodes = isObject(value.nodes) ? (value.nodes as Record<string, QaNode>) : {};
	const rawSummaries = isObject(value.summaries) ? (value.summaries as Record<string, SummaryRecord>) : {};
	const rawBranches = Array.isArray(value.branches) ? (value.branches as SessionArchive["branches"]) : [];
	const nodes = options.lenient ? usableNodes(rawNodes, sessionId) : rawNodes;
	const summaries = options.lenient ? usableSummaries(rawSummaries, sessionId, nodes) : rawSummaries;
	// Branches may only name nodes that were kept.
	const branches = options.lenient
		? rawBranches.filter((b) => isObject(b) && typeof b.leafId === "string" && Array.isArray(b.nodeIds) && b.nodeIds.every((id) => id in nodes))
		: rawBranches;
	if (!options.lenient) {
		// A workspace archive is checked whole on every load: one with a wrong shape would fail
		// every query that touches it, so it is refused here (and quarantined by the caller).
		const problem = shapeProblem(rawSession, value.nodes, value.summaries, value.branches, value.rejections, sessionId);
		if (problem !== undefined) throw new ArchiveError(`archive ${label} is damaged: ${problem}`);
	}
	const archive: SessionArchive = {
		format: ARCHIVE_FORMAT,
		version: ARCHIVE_VERSION,
		session: sessionFacts(rawSession, sessionId, legacyFields),
		nodes,
		summaries,
		branches,
		rejections: usableRejections(value.rejections, legacyFields),
	};
	return { archive, legacyFields, paths: { files, workspaces, sessionDirs } };
}

/**
 * The session facts without any path field. Pi's header names the parent session by its file path
 * (`parentSession`); only the id in that file name is kept.
 */
function sessionFacts(raw: Record<string, unknown>, sessionId: string, legacyFields: string[]): SessionFacts {
	const out: Record<string, unknown> = {};
	for (const [key, v] of Object.entries(raw)) {
		if ((LEGACY_PATH_FIELDS as readonly string[]).includes(key) || key === "parentSession") continue;
		out[key] = v;
	}
	out.sessionId = sessionId;
	if (typeof raw.parentSession === "string") {
		legacyFields.push("session.parentSession");
		const parentId = sessionIdFromFileName(raw.parentSession);
		if (parentId && out.parentSessionId === undefined) out.parentSessionId = parentId;
	}
	if (typeof out.version !== "number") out.version = 3;
	if (typeof out.startedAt !== "string") out.startedAt = new Date(0).toISOString();
	return out as unknown as SessionFacts;
}

function usableNodes(nodes: Record<string, unknown>, sessionId: string): Record<string, QaNode> {
	const out: Record<string, QaNode> = {};
	for (const [id, n] of Object.entries(nodes)) {
		if (!isObject(n) || (n.id !== undefined && n.id !== id)) continue;
		if (!Array.isArray(n.parts) || !n.parts.every((p) => isObject(p) && (p.kind === "input" || p.kind === "reply") && typeof p.text === "string")) continue;
		if (!Array.isArray(n.entryIds) || typeof n.completed !== "boolean" || typeof n.startedAt !== "string" || typeof n.endedAt !== "string") continue;
		out[id] = { ...(n as unknown as QaNode), kind: "qa", id, sessionId };
	}
	return out;
}

/** Summaries of the current shape whose children were kept (level by level). */
function usableSummaries(summaries: Record<string, unknown>, sessionId: string, nodes: Record<string, QaNode>): Record<string, SummaryRecord> {
	const candidates: SummaryRecord[] = [];
	for (const [id, s] of Object.entries(summaries)) {
		if (!isObject(s) || (s.id !== undefined && s.id !== id)) continue;
		if (typeof s.level !== "number" || !Array.isArray(s.childIds) || !isObject(s.range) || typeof s.startedAt !== "string" || typeof s.endedAt !== "string")
			continue;
		const ready = s.status === "ready" && typeof s.text === "string";
		candidates.push({ ...(s as unknown as SummaryRecord), id, sessionId, status: ready ? "ready" : "pending" });
	}
	const out: Record<string, SummaryRecord> = {};
	for (const s of candidates.sort((a, b) => a.level - b.level)) {
		if (s.childIds.every((c) => (s.level === 1 ? c in nodes : c in out))) out[s.id] = s;
	}
	return out;
}

/**
 * Rejected lines as they are kept now: where, why and how long, no text. Older archives kept the
 * line's first 120 characters (`sample`), which could hold anything (a path, a secret): dropped,
 * and named among the legacy fields so the archive is written again without them.
 */
function usableRejections(value: unknown, legacyFields: string[]): SessionArchive["rejections"] {
	if (!isObject(value) || !Array.isArray(value.lines)) return { count: 0, lines: [] };
	const lines: LineRejection[] = [];
	let samples = false;
	for (const l of value.lines) {
		if (!isObject(l) || typeof l.line !== "number" || typeof l.reason !== "string") continue;
		samples ||= l.sample !== undefined;
		lines.push({ line: l.line, reason: l.reason, ...(typeof l.bytes === "number" ? { bytes: l.bytes } : {}) });
	}
	if (samples) legacyFields.push("rejections.lines.sample");
	const count = typeof value.count === "number" && value.count >= lines.length ? value.count : lines.length;
	return { count, lines };
}

/**
 * What is wrong with a current archive's shape, or `undefined`: every field the queries, the
 * projection and the summary worker read, with the type they read it as.
 */
function shapeProblem(
	session: Record<string, unknown>,
	nodes: unknown,
	summaries: unknown,
	branches: unknown,
	rejections: unknown,
	sessionId: string,
): string | undefined {
	for (const key of ["name", "parentSessionId", "startedAt"] as const)
		if (session[key] !== undefined && typeof session[key] !== "string") return `session.${key} is not text`;
	if (!isObject(nodes)) return "nodes is not an object";
	for (const [id, n] of Object.entries(nodes)) {
		const where = `node ${JSON.stringify(id.slice(0, 40))}`;
		if (!isObject(n)) return `${where} is not an object`;
		if (n.id !== id || n.kind !== "qa" || n.sessionId !== sessionId) return `${where} does not name itself, its kind and its session`;
		if (!Array.isArray(n.parts) || n.parts.length === 0) return `${where}: parts is not a list`;
		for (const p of n.parts) {
			if (!isObject(p) || (p.kind !== "input" && p.kind !== "reply") || typeof p.text !== "string" || typeof p.entryId !== "string" || typeof p.at !== "string")
				return `${where}: a part is not an input or a reply with text`;
		}
		if (!isTextList(n.entryIds) || typeof n.startedAt !== "string" || typeof n.endedAt !== "string" || typeof n.completed !== "boolean")
			return `${where}: entryIds, times or completed are not of their type`;
		if (n.labels !== undefined && !isTextList(n.labels)) return `${where}: labels is not a list of text`;
	}
	if (!isObject(summaries)) return "summaries is not an object";
	for (const [id, s] of Object.entries(summaries)) {
		const where = `summary ${JSON.stringify(id.slice(0, 40))}`;
		if (!isObject(s)) return `${where} is not an object`;
		if (s.id !== id || s.sessionId !== sessionId || !Number.isInteger(s.level) || (s.level as number) < 1)
			return `${where} does not name itself, its session and its level`;
		if (!isTextList(s.childIds) || !isObject(s.range) || typeof s.range.firstEntryId !== "string" || typeof s.range.lastEntryId !== "string")
			return `${where}: childIds or range is not of its type`;
		if (typeof s.startedAt !== "string" || typeof s.endedAt !== "string") return `${where}: times are not text`;
		if (
			(s.status !== "pending" && s.status !== "ready") ||
			(s.status === "ready" && typeof s.text !== "string") ||
			(s.text !== undefined && typeof s.text !== "string")
		)
			return `${where}: status and text do not agree`;
		if (s.stale !== undefined && typeof s.stale !== "boolean") return `${where}: stale is not true or false`;
	}
	if (!Array.isArray(branches)) return "branches is not a list";
	for (const b of branches)
		if (!isObject(b) || typeof b.leafId !== "string" || !isTextList(b.nodeIds)) return "a branch is not a leaf id with a list of node ids";
	if (rejections !== undefined) {
		if (!isObject(rejections) || typeof rejections.count !== "number" || !Array.isArray(rejections.lines)) return "rejections is not a count with lines";
		for (const l of rejections.lines)
			if (!isObject(l) || typeof l.line !== "number" || typeof l.reason !== "string") return "a rejected line has no line number or reason";
	}
	return undefined;
}

function isTextList(value: unknown): value is string[] {
	return Array.isArray(value) && value.every((v) => typeof v === "string");
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
