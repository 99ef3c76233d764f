import { hashString } from "./lazyCrypto.ts";

/**
 * Stable ids. A node id is a hash of the session id and native entry ids only — never of a path,
 * a time of ingestion or a counter — so re-ingesting, rebuilding or ingesting on another machine
 * yields the same ids. All ids match `ID_PATTERN`.
 */

/** What every id pbot hands out (and accepts) looks like. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether a string is acceptable as an id (and so as a file name stem). */
export function isValidId(id: string): boolean {
	return ID_PATTERN.test(id) && id !== "-" && id !== "_";
}

function digest(parts: readonly string[]): string {
	// Each part ends with NUL: the same bytes as updating a hash part by part.
	let input = "";
	for (const part of parts) input += `${part}\u0000`;
	// 120 bits: collisions are not a practical concern within one workspace.
	// (One-shot where Node has it: an ingest hashes once per Q&A and summary.)
	return hashString("sha256", input).slice(0, 20);
}

/**
 * Id of a Q&A: its session and the entry ids of its inputs (the question as asked). The answer is
 * left out on purpose, so an open Q&A keeps its id when its answer arrives. `extra` separates the
 * rare Q&As whose inputs are the same (only hostile or duplicated-id files produce them).
 */
export function qaId(sessionId: string, keyEntryIds: readonly string[], extra?: readonly string[]): string {
	return `qa_${digest(["qa", sessionId, ...keyEntryIds, ...(extra ? ["#", ...extra] : [])])}`;
}

/** Id of a summary: its session, level and the ids of the four nodes it covers. */
export function summaryId(sessionId: string, level: number, childIds: readonly string[]): string {
	return `s${level}_${digest(["summary", sessionId, String(level), ...childIds])}`;
}
