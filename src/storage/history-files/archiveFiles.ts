import { mkdir, readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, type SessionArchive } from "../../services/history/archive.ts";
import { isValidId } from "../../services/history/ids.ts";
import { isTemporaryFile, writeJsonAtomic } from "./writeJsonAtomic.ts";

/** The only folder pbot writes to, relative to the workspace. */
export const PBOT_DIR = join(".pi", "pbot");
export const HISTORY_DIR = join(PBOT_DIR, "history");

/** Raised for an archive that cannot be used; the file itself is left as it is. */
export class ArchiveError extends Error {
	override readonly name = "ArchiveError";
}

export function historyDir(workspace: string): string {
	return join(resolve(workspace), HISTORY_DIR);
}

/** The archive file of a session. The id is checked first: it becomes a file name. */
export function archivePath(workspace: string, sessionId: string): string {
	if (!isValidId(sessionId)) throw new ArchiveError(`invalid session id ${JSON.stringify(sessionId.slice(0, 80))}: ids are 1–128 of A–Z a–z 0–9 _ -`);
	return join(historyDir(workspace), `${sessionId}.json`);
}

/** Session ids that have an archive in the workspace. */
export async function listArchiveIds(workspace: string): Promise<string[]> {
	let names: string[];
	try {
		names = await readdir(historyDir(workspace));
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
		throw err;
	}
	return names
		.filter((n) => n.endsWith(".json") && !isTemporaryFile(n))
		.map((n) => n.slice(0, -".json".length))
		.filter(isValidId)
		.sort();
}

/** Reads an archive; `undefined` when there is none. A damaged one is an `ArchiveError`. */
export async function readArchive(workspace: string, sessionId: string): Promise<SessionArchive | undefined> {
	let text: string;
	try {
		text = await readFile(archivePath(workspace, sessionId), "utf8");
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw err;
	}
	return parseArchive(text, sessionId);
}

/** Parses and upcasts an archive's JSON text. */
export function parseArchive(text: string, expectedId?: string): SessionArchive {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (err) {
		throw new ArchiveError(`archive ${expectedId ?? ""} is not valid JSON: ${(err as Error).message}`);
	}
	if (typeof value !== "object" || value === null) throw new ArchiveError(`archive ${expectedId ?? ""} is not an object`);
	const archive = value as Partial<SessionArchive> & Record<string, unknown>;
	if (archive.format !== ARCHIVE_FORMAT) throw new ArchiveError(`archive ${expectedId ?? ""} has format ${JSON.stringify(archive.format)}, expected ${ARCHIVE_FORMAT}`);
	if (typeof archive.version !== "number" || archive.version > ARCHIVE_VERSION) {
		throw new ArchiveError(`archive ${expectedId ?? ""} has version ${String(archive.version)}; this pbot reads up to ${ARCHIVE_VERSION}`);
	}
	const sessionId = archive.session?.sessionId;
	if (typeof sessionId !== "string" || (expectedId !== undefined && sessionId !== expectedId)) {
		throw new ArchiveError(`archive ${expectedId ?? ""} names session ${JSON.stringify(sessionId)}`);
	}
	return {
		format: ARCHIVE_FORMAT,
		version: ARCHIVE_VERSION,
		session: archive.session as SessionArchive["session"],
		nodes: archive.nodes ?? {},
		summaries: archive.summaries ?? {},
		branches: archive.branches ?? [],
		rejections: archive.rejections ?? { count: 0, lines: [] },
	};
}

/** Writes a session's archive atomically into the workspace's history folder. */
export async function writeArchive(workspace: string, archive: SessionArchive): Promise<void> {
	const file = archivePath(workspace, archive.session.sessionId);
	await mkdir(historyDir(workspace), { recursive: true });
	await writeJsonAtomic(file, archive);
}
