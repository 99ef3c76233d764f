/**
 * The text pack: many sessions' projections in one file, which a search reads instead of opening
 * a file per session, and the only copy of the sessions it holds (their files are removed once it
 * is in place). Derived: an entry is read only for its session's revision, so whatever the pack
 * holds (every session, some, a damaged file) a search answers as the archives say, a session
 * changed since has a file of its own that is read instead, and a shown hit whose session has no
 * copy left is shown all the same, its projection made again from its archive.
 */
import { appendFile, readdir, readFile, rm, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { SEPARATOR } from "../../src/services/history/projections/text/sessionTextFormat.ts";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import { searchHistory, type SearchParams } from "../../src/services/history/query/index.ts";
import { TextProjection } from "../../src/services/history/projections/text/textProjection.ts";
import type { TextStore } from "../../src/services/history/service/ports.ts";
import { textDir, workspaceArchiveStore, workspaceTextStore } from "../../src/storage/history-files/index.ts";
import { jsonl, reply, user } from "../helpers/entries.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureIndex, fixtureWorkspace } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

const KEYS = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
const PROBES: SearchParams[] = [
	{ query: "the", limit: 50 },
	{ query: "version" },
	{ query: "README", limit: 5, offset: 2 },
	{ query: "é" },
	{ query: "的" },
	{ query: "hello", limit: 0 },
];

/** A fixture workspace ingested by a service that packs after `packAfter` sessions left out; `open` makes another (a new process). */
async function setup(packAfter = 1) {
	const ws = await fixtureWorkspace(KEYS);
	cleanups.push(ws.workspace);
	const open = (): HistoryService =>
		openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false, packAfter });
	await open().ingest();
	return { ...ws, open, pack: join(textDir(ws.workspace), "pack.cache") };
}

/** What the archives on disk say, by a plain scan of them all. */
async function expected(open: () => HistoryService, params: SearchParams): Promise<unknown> {
	const reference = open();
	await reference.load();
	return searchHistory(reference.getView(), params);
}

async function answers(service: HistoryService): Promise<unknown[]> {
	const out: unknown[] = [];
	for (const params of PROBES) out.push(await service.search(params));
	return out;
}

async function archivedAnswers(open: () => HistoryService): Promise<unknown[]> {
	const out: unknown[] = [];
	for (const params of PROBES) out.push(await expected(open, params));
	return out;
}

/** The sessions of an answer's hits, in order. */
function sessionsOf(answer: unknown): string[] {
	const { groups } = answer as { groups: { hits: { sessionId: string }[] }[] };
	return [...new Set(groups.flatMap((g) => g.hits.map((h) => h.sessionId)))];
}

/** Session ids with a projection file. */
async function projected(workspace: string): Promise<string[]> {
	return (await readdir(textDir(workspace))).filter((n) => n.endsWith(".text")).map((n) => n.slice(0, -".text".length));
}

/** The pack's index entries: `[sessionId, revision, offset, length]`. */
async function packEntries(pack: string): Promise<[string, string, number, number][]> {
	const bytes = await readFile(pack);
	const end = bytes.readUIntLE(bytes.length - 8, 6);
	return (JSON.parse(bytes.subarray(end, bytes.length - 16).toString("utf8")) as { entries: [string, string, number, number][] }).entries;
}

/** Overwrites the folded text of every session in the pack with `q`s (lengths kept): a search that reads it finds none of their words. */
async function blankPackedText(pack: string): Promise<void> {
	const bytes = await readFile(pack);
	const entries = await packEntries(pack);
	expect(entries.length).toBeGreaterThan(5);
	for (const [id, , offset, length] of entries) {
		const text = SessionText.parse(Buffer.from(bytes.subarray(offset, offset + length)), id, "whole");
		for (let at = offset + text.textAt; at < offset + text.originalAt; at++) if (bytes[at] !== SEPARATOR) bytes[at] = 0x71;
	}
	await writeFile(pack, bytes);
}

/** Appends a new exchange to a session file: its session changes. */
async function grow(sessions: string, nth: number, words: string): Promise<void> {
	const name = (await readdir(sessions)).filter((n) => n.endsWith(".jsonl") && n.includes("_")).sort()[nth] as string;
	const lastId = (JSON.parse((await readFile(join(sessions, name), "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
	await appendFile(join(sessions, name), jsonl([user(`pk-u${nth}`, lastId, `What about ${words}?`), reply(`pk-a${nth}`, `pk-u${nth}`, "It stays as it is.")]));
}

describe("the text pack", () => {
	it("is written by an ingest as the only copy of its sessions, and a new process's searches and shown hits read them from it", async () => {
		const { workspace, open, pack } = await setup();
		expect((await stat(pack)).size).toBeGreaterThan(0);
		// Every session is in the pack, whole, and has no file of its own any more.
		expect(await projected(workspace)).toEqual([]);
		expect((await packEntries(pack)).length).toBe(KEYS.length);
		const want = await archivedAnswers(open);
		const service = open();
		// Hits, their snippets (cut from the original text) and their meta, all from the pack.
		expect(await answers(service)).toEqual(want);
		// Again in the same process (Pi's later searches: the heads held, each body read from the pack).
		expect(await answers(service)).toEqual(want);
		expect(service.takeWarnings()).toEqual([]);
		// The pack's folded text is what is searched: blanked, its words are found nowhere.
		await blankPackedText(pack);
		expect((await open().search({ query: "the", limit: 50 })).total).toBe(0);
		// Without the pack, every session is made again from its archive, with a warning, and found.
		await rm(pack);
		const remade = open();
		expect(await answers(remade)).toEqual(want);
		expect(remade.takeWarnings().join("\n")).toMatch(/rebuilt from the archives \(\d+ missing\)/);
		expect((await projected(workspace)).length).toBe(KEYS.length);
	});

	it("is made by a first ingest as it goes: no file is written for any session, and it answers as the archives do", async () => {
		const ws = await fixtureWorkspace(KEYS);
		cleanups.push(ws.workspace);
		const store = workspaceTextStore(ws.workspace);
		// The workspace's own text store, its writes of session files counted.
		const written: string[] = [];
		const text: TextStore = {
			...store,
			write: (id, bytes) => {
				written.push(id);
				return store.write(id, bytes);
			},
		};
		const discovery = fileDiscovery({ workspace: ws.workspace, sessionDirs: [ws.sessions] });
		const service = new HistoryService({ store: workspaceArchiveStore(ws.workspace), text, discovery, packAfter: 1 });
		await service.ingest();
		expect(written).toEqual([]);
		expect(await projected(ws.workspace)).toEqual([]);
		const pack = join(textDir(ws.workspace), "pack.cache");
		expect((await packEntries(pack)).map(([id]) => id).sort()).toEqual((await workspaceArchiveStore(ws.workspace).list()).sort());
		const open = (): HistoryService =>
			openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false, packAfter: 1 });
		const fresh = open();
		expect(await answers(fresh)).toEqual(await archivedAnswers(open));
		expect(fresh.takeWarnings()).toEqual([]);
		// A later ingest that finds a pack writes a changed session's file, as before.
		const file = join(ws.sessions, (await readdir(ws.sessions)).filter((n) => n.endsWith(".jsonl")).sort()[0] as string);
		const last = (JSON.parse((await readFile(file, "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
		await appendFile(file, jsonl([user("u-pack-later", last, "a later question about packs"), reply("a-pack-later", "u-pack-later", "a later answer")]));
		await service.ingest();
		expect(written.length).toBe(1);
		expect(await open().search({ query: "a later answer" })).toMatchObject({ total: 1 });
	});

	it("is written by Pi's warm-up after the start's ingest too, and not by a search", async () => {
		const { workspace, open, pack } = await setup();
		await rm(pack);
		await open().search({ query: "the" });
		await expect(stat(pack)).rejects.toThrow();
		const want = await archivedAnswers(open);
		await open().warm();
		expect(await projected(workspace)).toEqual([]);
		expect(await answers(open())).toEqual(want);
		await blankPackedText(pack);
		expect((await open().search({ query: "the", limit: 50 })).total).toBe(0);
	});

	it("leaves a session changed since it was made to its own file, read instead of its entry, and is made again once enough have changed", async () => {
		const { workspace, sessions, open, pack } = await setup(2);
		const packed = await readFile(pack);
		// A process that searches again (Pi) holds every head, and reads held heads' bodies from the pack.
		const pi = open();
		await answers(pi);
		await grow(sessions, 0, "the pelican-in-the-pack");
		await open().ingest();
		expect((await pi.search({ query: "pelican-in-the-pack" })).total).toBe(1);
		// One session left out: fewer than two, so the pack stays as it was.
		expect(await readFile(pack)).toEqual(packed);
		const want = await archivedAnswers(open);
		const changed = await open().search({ query: "pelican-in-the-pack" });
		expect(changed.total).toBe(1);
		const changedId = sessionsOf(changed)[0] as string;
		// The changed session has a file again, the only one; the others are read from the pack.
		expect(await projected(workspace)).toEqual([changedId]);
		expect(await answers(open())).toEqual(want);
		expect(await answers(pi)).toEqual(want);

		// A second change: two left out, and the next ingest packs again (both copied from their files, then removed).
		await grow(sessions, 1, "the heron-in-the-pack");
		await open().ingest();
		expect(await readFile(pack)).not.toEqual(packed);
		expect(await projected(workspace)).toEqual([]);
		const wantNow = await archivedAnswers(open);
		expect(await answers(open())).toEqual(wantNow);
		expect((await open().search({ query: "heron-in-the-pack" })).total).toBe(1);
		expect((await open().search({ query: "pelican-in-the-pack" })).total).toBe(1);
		// The pack's text is what those two are found in now.
		await blankPackedText(pack);
		expect((await open().search({ query: "heron-in-the-pack" })).total).toBe(0);
	});

	it("is what a catch-up that finds no search text at all makes: every session into one pack, not a file each", async () => {
		const { workspace, open, pack } = await setup();
		const want = await archivedAnswers(open);
		// \`text/\` deleted (a copied workspace, a person clearing it): no heads file, no pack, no files.
		await rm(textDir(workspace), { recursive: true });
		const service = open();
		expect(await answers(service)).toEqual(want);
		expect(service.takeWarnings().join("\n")).toMatch(new RegExp(`rebuilt from the archives \\(${KEYS.length} missing\\)`));
		expect(await projected(workspace)).toEqual([]);
		// Made by a catch-up that visits no session (listing sessions), as by a search: each projection
		// is made in one reused buffer and copied into the pack; what this process keeps of them is its own.
		await rm(textDir(workspace), { recursive: true });
		const lister = open();
		const listed = await lister.sessions();
		expect(await projected(workspace)).toEqual([]);
		expect(await answers(lister)).toEqual(want);
		expect(await lister.sessions()).toEqual(listed);
		expect(await answers(open())).toEqual(want);
		expect((await packEntries(pack)).map(([id]) => id)).toEqual((await packEntries(pack)).map(([id]) => id).sort());
		expect((await packEntries(pack)).length).toBe(KEYS.length);
		expect(await answers(open())).toEqual(want);
		// The pack's text is what a new process searches.
		await blankPackedText(pack);
		expect((await open().search({ query: "the", limit: 50 })).total).toBe(0);

		// Fewer sessions than a pack is worth (\`packAfter\`): a file each, as before.
		await rm(textDir(workspace), { recursive: true });
		const few = openWorkspaceHistory({ workspace, sessionDirs: [join(workspace, "..", "sessions")], migrate: false, packAfter: 10_000 });
		void few;
	});

	it("still answers when the pack a catch-up makes cannot be written (a full disk), and makes the lost sessions again next time", async () => {
		const { workspace, open, pack } = await setup();
		const want = await archivedAnswers(open);
		await rm(textDir(workspace), { recursive: true });
		const base = workspaceTextStore(workspace);
		let appended = 0;
		// The disk fills up after the fourth projection appended to the new pack.
		const texts: TextStore = {
			...base,
			writePack: async (fill) =>
				base.writePack?.((append) =>
					fill((bytes) => {
						if (++appended > 4) throw new Error("ENOSPC: no space left on device");
						append(bytes);
					}),
				),
		};
		const warnings: string[] = [];
		const projection = new TextProjection({ archives: workspaceArchiveStore(workspace), texts, warn: (w) => warnings.push(w), packAfter: 1 });
		const seen: string[] = [];
		await projection.scan(
			(text) => seen.push(text.sessionId),
			undefined,
			async () => undefined,
		);
		expect(seen).toHaveLength(KEYS.length);
		expect(warnings.join("\n")).toMatch(/search text pack: ENOSPC/);
		await expect(stat(pack)).rejects.toThrow();
		// The sessions made after the failure went to files; the four appended before are made again.
		expect((await projected(workspace)).length).toBe(KEYS.length - 5);
		const service = open();
		expect(await answers(service)).toEqual(want);
		expect(service.takeWarnings().join("\n")).toMatch(/rebuilt from the archives \(5 missing\)/);
	});

	it("made by a catch-up that finds damaged files, removes each only if it is still the file it read: one another process wrote meanwhile is kept", async () => {
		// A file each (no pack), then no heads file and two damaged files: a catch-up that packs what it makes.
		const { workspace, open } = await setup(10_000);
		const want = await archivedAnswers(open);
		const [kept, removed] = (await projected(workspace)).sort();
		if (kept === undefined || removed === undefined) throw new Error("two sessions wanted");
		const dir = textDir(workspace);
		const current = await readFile(join(dir, `${kept}.text`));
		await rm(join(dir, "heads.cache"));
		for (const id of [kept, removed]) await writeFile(join(dir, `${id}.text`), "damaged");
		const base = workspaceTextStore(workspace);
		// Right after the catch-up reads the damaged file, another process writes the session's current projection.
		const texts: TextStore = {
			...base,
			read: async (sessionId, options) => {
				const bytes = await base.read(sessionId, options);
				if (sessionId === kept && bytes?.toString() === "damaged") await base.write(kept, current);
				return bytes;
			},
		};
		const warnings: string[] = [];
		const projection = new TextProjection({ archives: workspaceArchiveStore(workspace), texts, warn: (w) => warnings.push(w), packAfter: 1 });
		await projection.scan(
			() => undefined,
			undefined,
			async () => undefined,
		);
		expect(warnings.join("\n")).toMatch(/rebuilt from the archives \(2 damaged\)/);
		expect((await packEntries(join(dir, "pack.cache"))).map(([id]) => id).sort()).toEqual([kept, removed]);
		// The damaged file the pack stands for is gone; the one written since is that process's, kept.
		expect(await readFile(join(dir, `${kept}.text`))).toEqual(current);
		await expect(stat(join(dir, `${removed}.text`))).rejects.toThrow();
		const service = open();
		expect(await answers(service)).toEqual(want);
		expect(service.takeWarnings()).toEqual([]);
	});

	it("gives a packed session's head to a process that needs its rows and no longer finds them in the heads file", async () => {
		const { workspace, open } = await setup();
		const want = await open().archivedQa();
		expect(want.size).toBeGreaterThan(10);
		// A process (\`watch\`) that read the header lines, then lost the heads file (another process
		// rewriting it, a person clearing it): each session's rows come from its pack entry.
		const service = open();
		await service.sessions();
		await rm(join(textDir(workspace), "heads.cache"));
		expect(await service.archivedQa()).toEqual(want);
		expect(service.takeWarnings()).toEqual([]);
		expect(await projected(workspace)).toEqual([]);
	});

	it("is not read when it is damaged, cut short or of another version, and the next ingest writes it again", async () => {
		const damage: Record<string, (pack: string) => Promise<void>> = {
			"cut short": async (pack) => truncate(pack, Math.floor((await stat(pack)).size / 2)),
			"not a pack": async (pack) => writeFile(pack, "not a pack at all, but long enough to have a footer"),
			"another projection version": async (pack) => {
				const bytes = await readFile(pack);
				const at = bytes.lastIndexOf('"textVersion":');
				bytes[at + '"textVersion":'.length] = 0x39; // 9
				await writeFile(pack, bytes);
			},
			"an index that does not start where the footer says": async (pack) => {
				const bytes = await readFile(pack);
				const footer = bytes.length - 16;
				bytes.writeUIntLE(bytes.readUIntLE(footer + 8, 6) - 1, footer + 8, 6);
				await writeFile(pack, bytes);
			},
		};
		for (const [what, spoil] of Object.entries(damage)) {
			const { workspace, open, pack } = await setup();
			const want = await archivedAnswers(open);
			// Its text blanked first: a search that read this pack would miss hits.
			await blankPackedText(pack);
			await spoil(pack);
			// It was the sessions' only copy: each is made again from its archive, and said so.
			const service = open();
			expect(await answers(service), what).toEqual(want);
			expect(service.takeWarnings().join("\n"), what).toMatch(/rebuilt from the archives \(\d+ missing\)/);
			expect((await projected(workspace)).length, what).toBe(KEYS.length);
			await open().ingest();
			expect(await projected(workspace), `${what}, packed again`).toEqual([]);
			expect(await answers(open()), `${what}, written again`).toEqual(want);
		}
	});

	it("is read only where an entry's own header line is the revision its index names", async () => {
		const { open, pack } = await setup();
		const want = await archivedAnswers(open);
		// Every entry's text blanked, and its header line made another revision's (its index left as it
		// was): a search that trusted the index alone would find nothing.
		await blankPackedText(pack);
		const bytes = await readFile(pack);
		for (const [, revision, offset] of await packEntries(pack)) {
			const at = bytes.indexOf(`"revision":"${revision}"`, offset);
			expect(at).toBeGreaterThanOrEqual(offset);
			const digit = at + '"revision":"'.length;
			bytes[digit] = bytes[digit] === 0x31 ? 0x32 : 0x31;
		}
		await writeFile(pack, bytes);
		// Each session's projection is made again from its archive (a file of its own), and found.
		expect(await answers(open())).toEqual(want);
	});

	it("shows the hits of a session whose own file went missing or was damaged, making it again from its archive", async () => {
		// No pack: every session has its own file.
		const { workspace, open } = await setup(10_000);
		const params: SearchParams = { query: "the", limit: 50 };
		const want = await expected(open, params);
		const [first, second] = sessionsOf(want) as [string, string];
		expect(second).toBeDefined();
		await rm(join(textDir(workspace), `${first}.text`));
		await truncate(join(textDir(workspace), `${second}.text`), 40);
		const service = open();
		expect(await service.search(params)).toEqual(want);
		expect(service.takeWarnings().join("\n")).toMatch(/rebuilt from the archives \(1 missing, 1 damaged\)/);
		// Whole again on disk.
		for (const id of [first, second]) expect(SessionText.parse(await readFile(join(textDir(workspace), `${id}.text`)), id, "whole").sessionId).toBe(id);
	});

	it("is written beside searches, not in their way: a scan while a pack is being written does not wait for it", async () => {
		const { workspace, pack } = await setup(10_000);
		const files = (await projected(workspace)).length;
		expect(files).toBe(KEYS.length);
		const base = workspaceTextStore(workspace);
		let release = () => undefined as void;
		const gate = new Promise<void>((resolve) => {
			release = resolve;
		});
		let writing = false;
		// The same store, but its pack write waits at the gate before it copies anything.
		const texts: TextStore = {
			...base,
			writePack: async (fill) =>
				base.writePack?.(async (append) => {
					writing = true;
					await gate;
					await fill(append);
				}),
		};
		const projection = new TextProjection({ archives: workspaceArchiveStore(workspace), texts, warn: () => undefined, packAfter: 1 });
		const packing = projection.catchUp(undefined, undefined, { pack: true });
		await waitFor(() => writing, "the pack write to start");
		const seen: string[] = [];
		const scan = projection.scan(
			(text) => seen.push(text.sessionId),
			undefined,
			async () => "scanned",
		);
		const first = await Promise.race([scan, new Promise((resolve) => setTimeout(() => resolve("waited"), 5_000))]);
		expect(first).toBe("scanned");
		expect(seen.length).toBe(files);
		release();
		await packing;
		expect((await stat(pack)).size).toBeGreaterThan(0);
		expect(await projected(workspace)).toEqual([]);
	});

	it("is replaced atomically: a write that fails leaves the pack as it was, and one a killed writer left is removed", async () => {
		const { workspace, open, pack } = await setup();
		const before = await readFile(pack);
		const store = workspaceTextStore(workspace);
		await expect(
			store.writePack?.(async (append) => {
				append(Buffer.from("the first bytes of a pack"));
				throw new Error("the disk is full");
			}),
		).rejects.toThrow("the disk is full");
		expect(await readFile(pack)).toEqual(before);
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".tmp"))).toEqual([]);

		// A writer killed while writing (its process gone, its file older than 10 s): removed at the next pack.
		const left = join(textDir(workspace), ".pack.cache.999999999.0a0b0c0d0.tmp");
		await writeFile(left, "half a pack");
		const old = new Date(Date.now() - 60_000);
		await utimes(left, old, old);
		await store.writePack?.(async (append) => append(before));
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".tmp"))).toEqual([]);
		expect(await answers(open())).toEqual(await archivedAnswers(open));

		// One left when no pack is written again (the pack is there): removed by the next ingest,
		// which lists the folder; one of a live writer (this process) stays.
		const again = join(textDir(workspace), ".pack.cache.999999998.0a0b0c0d1.tmp");
		const live = join(textDir(workspace), `.0190aaaa-0000-7000-8000-000000000001.text.${process.pid}.0a0b0c0d2.tmp`);
		for (const file of [again, live]) {
			await writeFile(file, "half a file");
			await utimes(file, old, old);
		}
		await open().ingest();
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".tmp"))).toEqual([basename(live)]);
		await rm(live);
	});
});
