/**
 * Inside Pi, pbot shares the main thread with the terminal UI: work that reads many files
 * synchronously must let the event loop turn now and then, or every key pressed meanwhile waits
 * for all of it (a rebuild of the search text held it for 3.7 s on the large bench history). With
 * a slice of 0 ms the work pauses at every chance, so the turns can be counted: a `setImmediate`
 * ticker runs once per turn. Without the pauses it ran only around the few asynchronous calls
 * (none inside a catch-up). Answers are the same either way.
 */
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { type PackEntry, TextPack } from "../../src/services/history/projections/text/textPack.ts";
import { TextProjection } from "../../src/services/history/projections/text/textProjection.ts";
import { writeTextPack } from "../../src/services/history/projections/text/writeTextPack.ts";
import type { StoredFileReader } from "../../src/services/history/service/ports.ts";
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

/** Session ids with a projection file of their own. */
async function projected(): Promise<string[]> {
	return (await readdir(textDir(made.workspace))).filter((n) => n.endsWith(".text"));
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

	it("a catch-up reading the first bytes of the archives it will make again (their parents), between archives", async () => {
		await rm(textDir(made.workspace), { recursive: true, force: true });
		const base = workspaceArchiveStore(made.workspace);
		let turns = 0;
		const at: number[] = [];
		// The store's glances at archives' first bytes, each noting how many turns the loop had made by then.
		const archives = {
			...base,
			parentOf: async (id: string) => {
				at.push(turns);
				return base.parentOf?.(id);
			},
		};
		const p = new TextProjection({ archives, texts: workspaceTextStore(made.workspace), warn: () => undefined, sliceMs: 0 });
		let done = false;
		const tick = () => {
			turns++;
			if (!done) setImmediate(tick);
		};
		setImmediate(tick);
		await p.catchUp();
		done = true;
		expect(at).toHaveLength(SESSIONS);
		for (let i = 1; i < at.length; i++) expect(at[i] as number).toBeGreaterThan(at[i - 1] as number);
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

	it("a pack's write, between sessions and within each (a long one is copied in pieces), packing what the files hold", async () => {
		const texts = workspaceTextStore(made.workspace);
		const heads: SessionText[] = [];
		for (const name of (await readdir(textDir(made.workspace))).filter((n) => n.endsWith(".text"))) {
			const id = name.slice(0, -".text".length);
			heads.push(SessionText.parse(await readFile(join(textDir(made.workspace), name)), id, "whole"));
		}
		expect(heads).toHaveLength(SESSIONS);
		// Pieces of 4 KB: the loop may turn before each session and after each piece.
		const piece = 4096;
		let pauses = 0;
		const written = await writeTextPack(texts, heads, undefined, async () => void pauses++, piece);
		expect(written.packed).toBe(SESSIONS);
		// Every file was copied whole: the pack's caller may remove each (still the file copied).
		expect(written.files.map((f) => f.sessionId).sort()).toEqual(heads.map((h) => h.sessionId).sort());
		const pieces = heads.reduce((n, h) => n + Math.ceil(h.end / piece), 0);
		expect(pieces).toBeGreaterThan(2 * SESSIONS);
		expect(pauses).toBe(SESSIONS + pieces);
		// Each entry is its file's bytes, whole; a pack copied from it holds the same.
		const check = async () => {
			const pack = TextPack.open((await texts.openPack?.()) as StoredFileReader) as TextPack;
			for (const head of heads) {
				const entry = pack.entryFor(head) as PackEntry;
				expect(pack.read(entry, 0, entry.length)).toEqual(head.bytes);
			}
			return pack;
		};
		const first = await check();
		// Copied from the first pack this time; the files (not removed here) are named again: the same bytes.
		const again = await writeTextPack(texts, heads, first, () => undefined, piece);
		expect(again.packed).toBe(SESSIONS);
		expect(again.files.map((f) => f.sessionId).sort()).toEqual(heads.map((h) => h.sessionId).sort());
		first.close();
		(await check()).close();
	});

	it("a pack's removals of the files it copied, between files", async () => {
		await rm(join(textDir(made.workspace), "pack.cache"), { force: true });
		const base = workspaceTextStore(made.workspace);
		expect((await projected()).length).toBe(SESSIONS);
		let turns = 0;
		const at: number[] = [];
		// The store's removals, each noting how many turns the loop had made by then.
		const texts = {
			...base,
			removeIf: async (id: string, identity: string) => {
				at.push(turns);
				return (await base.removeIf?.(id, identity)) ?? false;
			},
		};
		const p = new TextProjection({ archives: workspaceArchiveStore(made.workspace), texts, warn: () => undefined, sliceMs: 0, packAfter: 1 });
		let done = false;
		const tick = () => {
			turns++;
			if (!done) setImmediate(tick);
		};
		setImmediate(tick);
		await p.catchUp(undefined, undefined, { pack: true });
		done = true;
		expect(at).toHaveLength(SESSIONS);
		// The loop turned before each removal.
		for (let i = 1; i < at.length; i++) expect(at[i] as number).toBeGreaterThan(at[i - 1] as number);
		expect(await projected()).toEqual([]);
	});

	it("a pack's removals go on past a file that cannot be removed, which stays as a second copy, without a warning", async () => {
		await rm(textDir(made.workspace), { recursive: true, force: true });
		await projection().catchUp();
		const files = await projected();
		expect(files).toHaveLength(SESSIONS);
		const base = workspaceTextStore(made.workspace);
		const stuck = files[3]?.slice(0, -".text".length) as string;
		// One file is held open elsewhere (Windows refuses to remove it).
		const texts = {
			...base,
			removeIf: async (id: string, identity: string) => {
				if (id === stuck) throw Object.assign(new Error(`EBUSY: resource busy or locked, unlink '${id}.text'`), { code: "EBUSY" });
				return (await base.removeIf?.(id, identity)) ?? false;
			},
		};
		const warnings: string[] = [];
		const p = new TextProjection({ archives: workspaceArchiveStore(made.workspace), texts, warn: (w) => warnings.push(w), packAfter: 1 });
		await p.catchUp(undefined, undefined, { pack: true });
		expect(await projected()).toEqual([`${stuck}.text`]);
		expect(warnings).toEqual([]);
		expect(await scanned(projection())).toEqual(await scanned(p));
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
