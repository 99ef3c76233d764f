/** Access to the real Pi session files in fixtures/sessions (written by Pi's own SDK). */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyArchiveEvents, initialArchiveState, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import type { QaNode } from "../../src/services/history/model/types.ts";
import { replayEvents } from "./entries.ts";

export const FIXTURES_DIR = fileURLToPath(new URL("../../fixtures/sessions", import.meta.url));

interface FixtureEntry {
	readonly file: string;
	readonly facts?: Record<string, unknown>;
}
const index = JSON.parse(readFileSync(join(FIXTURES_DIR, "index.json"), "utf8")) as { sessions: Record<string, FixtureEntry> };

/** Every fixture's key (see fixtures/sessions/index.json). */
export function fixtureKeys(): string[] {
	return Object.keys(index.sessions);
}

export function fixturePath(key: string): string {
	const entry = index.sessions[key];
	if (!entry) throw new Error(`no fixture ${key}`);
	return join(FIXTURES_DIR, entry.file);
}

export function fixtureFacts<T = Record<string, unknown>>(key: string): T {
	return (index.sessions[key]?.facts ?? {}) as T;
}

export function fixtureBytes(key: string): Promise<Uint8Array> {
	return readFile(fixturePath(key));
}

export async function fixtureEvents(key: string): Promise<HistoryEvent[]> {
	return replayEvents(await fixtureBytes(key));
}

export async function fixtureArchive(key: string): Promise<SessionArchive> {
	const state = applyArchiveEvents(initialArchiveState(), await fixtureEvents(key));
	const archives = Object.values(state.sessions);
	if (archives.length !== 1) throw new Error(`fixture ${key} gave ${archives.length} sessions`);
	return archives[0] as SessionArchive;
}

/** The Q&A of an archive in branch order (first branch first), then any others. */
export function qaInOrder(archive: SessionArchive): QaNode[] {
	const seen = new Set<string>();
	const out: QaNode[] = [];
	for (const b of archive.branches)
		for (const id of b.nodeIds) {
			if (seen.has(id)) continue;
			seen.add(id);
			out.push(archive.nodes[id] as QaNode);
		}
	for (const n of Object.values(archive.nodes)) if (!seen.has(n.id)) out.push(n);
	return out;
}

/** The Q&A that contains a native entry id. */
export function qaWithEntry(archive: SessionArchive, entryId: string): QaNode[] {
	return Object.values(archive.nodes).filter((n) => n.entryIds.includes(entryId));
}

export const texts = (node: QaNode) => node.parts.map((p) => `${p.kind}:${p.text}`);
