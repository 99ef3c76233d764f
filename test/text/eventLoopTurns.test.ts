/**
 * Inside Pi, pbot shares the main thread with the terminal UI: work that reads many files
 * synchronously must let the event loop turn now and then, or every key pressed meanwhile waits
 * for all of it (a rebuild of the search text held it for 3.7 s on the large bench history). With
 * a slice of 0 ms the work pauses at every chance, so the turns can be counted: a `setImmediate`
 * ticker runs once per turn. Without the pauses it ran only around the few asynchronous calls
 * (none inside a catch-up). Answers are the same either way.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { TextProjection } from "../../src/services/history/projections/text/textProjection.ts";
import { textDir, workspaceArchiveStore, workspaceTextStore } from "../../src/storage/history-files/index.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

const SESSIONS = 24;
let made: Awaited<ReturnType<typeof generatedWorkspace>>;

beforeAll(async () => {
	made = await generatedWorkspace("pbot-turns-");
	for (let i = 0; i < SESSIONS; i++) await made.write(300 + i, { profile: "chat", targetBytes: 20_000, targetQa: 6, startMs: Date.UTC(2025, 4, 1 + i) });
	await openWorkspaceHistory({ workspace: made.workspace, sessionDirs: [made.sessions], agentDir: made.agentDir, migrate: false }).ingest();
});

afterAll(async () => {
	await rm(made.workspace, { recursive: true, force: true });
});

/** Runs `work` while counting the turns of the event loop it lets happen. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
	let turns = 0;
	let done = false;
	const tick = () => {
		if (done) return;
		turns++;
		setImmediate(tick);
	};
	setImmediate(tick);
	try {
		return { result: await work(), turns };
	} finally {
		done = true;
	}
}

function projection(sliceMs?: number, warnings: string[] = []): TextProjection {
	return new TextProjection({
		archives: workspaceArchiveStore(made.workspace),
		texts: workspaceTextStore(made.workspace),
		warn: (w) => warnings.push(w),
		...(sliceMs !== undefined ? { sliceMs } : {}),
	});
}

/** Each session visited: its id, revision and number of documents. */
async function scanned(p: TextProjection): Promise<string[]> {
	const seen: string[] = [];
	await p.scan(
		(text) => seen.push(`${text.sessionId}@${text.revision}:${text.docs}`),
		undefined,
		async () => undefined,
	);
	return seen;
}

describe("long work lets the event loop turn", () => {
	it("a catch-up making the search text again, between sessions and within each", async () => {
		await rm(textDir(made.workspace), { recursive: true, force: true });
		const warnings: string[] = [];
		const { turns } = await turnsDuring(() => projection(0, warnings).catchUp());
		// A turn before each session, and one between reading its archive and projecting it.
		expect(turns).toBeGreaterThanOrEqual(2 * SESSIONS);
		expect(warnings).toEqual([`search text rebuilt from the archives (${SESSIONS} missing)`]);
		// What it made is what a catch-up that never pauses finds current.
		const check: string[] = [];
		await projection(undefined, check).catchUp();
		expect(check).toEqual([]);
	});

	it("a search's scan, between sessions, and it sees what a scan without pauses sees", async () => {
		const plain = await scanned(projection());
		expect(plain).toHaveLength(SESSIONS);
		let seen: string[] = [];
		const { turns } = await turnsDuring(async () => {
			seen = await scanned(projection(0));
		});
		expect(turns).toBeGreaterThanOrEqual(SESSIONS);
		expect(seen).toEqual(plain);
	});

	it("discovery of a folder's session files, between files", async () => {
		const discover = (sliceMs?: number) =>
			fileDiscovery({ workspace: made.workspace, scanDirs: [made.sessions], ...(sliceMs !== undefined ? { sliceMs } : {}) }).discover();
		const plain = await discover();
		const { result, turns } = await turnsDuring(() => discover(0));
		expect(turns).toBeGreaterThanOrEqual(SESSIONS);
		expect(result.sources.map((s) => s.key)).toEqual(plain.sources.map((s) => s.key));
	});
});
