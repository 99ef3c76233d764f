/**
 * One bad archive never hides the others: an archive with a wrong shape (valid JSON), or cut short
 * by hand, is refused on load, moved aside with its bytes kept, reported, and its session extracted
 * again from its native file — in the same query — while every other session answers as before.
 */
import { readdir, readFile, rename, truncate, utimes, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { archivePath, historyDir } from "../../src/storage/history-files/index.ts";
import { fixtureSessionId, ingestedFixtureWorkspace } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

const KEYS = ["tools-thinking", "error-reply", "unicode-image", "long-answer"] as const;
const [BAD, ...GOOD] = KEYS.map(fixtureSessionId) as [string, ...string[]];

async function setup() {
	const ws = await ingestedFixtureWorkspace(KEYS, cleanups);
	const { open } = ws;
	const answers = { search: await open().search({ query: "the", limit: 50 }), sessions: await open().sessions({ limit: 50 }) };
	return { ...ws, answers };
}

type Damage = (archive: Record<string, unknown>) => unknown;
const SHAPES: [string, Damage][] = [
	[
		"a Q&A's parts null",
		(a) => ({ ...a, nodes: Object.fromEntries(Object.entries(a.nodes as object).map(([id, n], i) => [id, i === 0 ? { ...n, parts: null } : n])) }),
	],
	["a branch's nodeIds null", (a) => ({ ...a, branches: (a.branches as object[]).map((b, i) => (i === 0 ? { ...b, nodeIds: null } : b)) })],
	["the session's name a list", (a) => ({ ...a, session: { ...(a.session as object), name: ["x"] } })],
	["nodes null", (a) => ({ ...a, nodes: null })],
];

/**
 * Writes a file as editors and tools mostly do: a new file renamed over the old one (the folder
 * changes with it). One changed in place is found by `ingest` and `read` (see the last tests).
 */
async function replace(file: string, text: string): Promise<void> {
	await writeFile(`${file}.edit`, text);
	await rename(`${file}.edit`, file);
}

async function asides(workspace: string): Promise<string[]> {
	return (await readdir(historyDir(workspace))).filter((n) => n.startsWith(`${BAD}.json.damaged-`));
}

describe("a damaged archive beside good ones", () => {
	for (const [what, damage] of SHAPES) {
		it(`${what}: refused, moved aside, named, and extracted again; every answer as before`, async () => {
			const { workspace, open, answers } = await setup();
			const file = archivePath(workspace, BAD);
			const damaged = `${JSON.stringify(damage(JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>))}\n`;
			await replace(file, damaged);
			const service = open();
			expect(await service.search({ query: "the", limit: 50 })).toEqual(answers.search);
			expect(service.takeWarnings().join("\n")).toMatch(new RegExp(`archive ${BAD}: .*is damaged.*kept as ${BAD}\\.json\\.damaged-`));
			const kept = await asides(workspace);
			expect(kept).toHaveLength(1);
			expect(await readFile(`${historyDir(workspace)}/${kept[0]}`, "utf8")).toBe(damaged);
			// Made whole again: the next process has nothing to say.
			const next = open();
			expect(await next.sessions({ limit: 50 })).toEqual(answers.sessions);
			expect(await next.read({ id: BAD })).toEqual(await open().read({ id: BAD }));
			expect(next.takeWarnings()).toEqual([]);
		});
	}

	it("with no session file to extract it again from (a workspace copied without Pi's files): said, by a query and by an ingest, not left to vanish", async () => {
		const { workspace, sessions, open } = await setup();
		// Pi's files are not here: only the archives came along.
		for (const name of await readdir(sessions)) await rename(`${sessions}/${name}`, `${workspace}/${name}.away`);
		const lost = new RegExp(`session ${BAD}: no session file of it was found to extract it again, so its Q&A are left out until the file is back`);
		const file = archivePath(workspace, BAD);
		const damaged = `${JSON.stringify({ ...(JSON.parse(await readFile(file, "utf8")) as object), nodes: null })}\n`;
		await replace(file, damaged);
		const service = open();
		const found = await service.search({ query: "the", limit: 50 });
		expect(found.kind === "hits" && found.groups.flatMap((g) => g.hits).some((h) => h.sessionId === BAD)).toBe(false);
		expect(service.takeWarnings().join("\n")).toMatch(lost);
		// Damaged again (the copy came with a damaged archive): an ingest says it in its report.
		await replace(file, damaged);
		const report = await open().ingest();
		expect(report.warnings.join("\n")).toMatch(lost);
		// The good sessions answer as before; the bad one's bytes are kept.
		expect((await open().sessions({ limit: 50 })).sessions.map((s) => s.sessionId).sort()).toEqual([...GOOD].sort());
		expect(await asides(workspace)).toHaveLength(2);
	});

	it("cut short by hand: `ingest` does not pass it as unchanged; it is moved aside and extracted again", async () => {
		const { workspace, open, answers } = await setup();
		const file = archivePath(workspace, BAD);
		await truncate(file, Math.floor((await readFile(file)).length / 2));
		const service = open();
		const report = await service.refresh({ checkArchives: true });
		expect(report.warnings.join("\n")).toMatch(new RegExp(`archive ${BAD}: .*not valid JSON.*kept as`));
		expect(report.sessions.map((s) => s.sessionId)).toEqual([BAD]);
		expect(await asides(workspace)).toHaveLength(1);
		expect(await open().search({ query: "the", limit: 50 })).toEqual(answers.search);
		for (const id of GOOD) expect((await open().read({ id })).id).toBe(id);
	});

	it("cut short by hand, then read: the node is found all the same", async () => {
		const { workspace, open } = await setup();
		const want = await open().read({ id: BAD });
		const file = archivePath(workspace, BAD);
		await truncate(file, 10);
		const service = open();
		expect(await service.read({ id: BAD })).toEqual(want);
		expect(service.takeWarnings().join("\n")).toMatch(/kept as/);
	});
});

describe("an archive written by a newer pbot", () => {
	it("is listed from its facts with a warning, not hidden; not overwritten; the others answer as before", async () => {
		const { workspace, sessions: sessionDir, open, answers } = await setup();
		const file = archivePath(workspace, BAD);
		const archive = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
		const newer = `${JSON.stringify({ ...archive, version: 99, session: { ...(archive.session as object), name: "From the future" }, nodes: "a shape this pbot cannot know" })}\n`;
		await replace(file, newer);
		const service = open();
		const listed = await service.sessions({ limit: 50 });
		const entry = listed.sessions.find((s) => s.sessionId === BAD);
		expect(entry?.title).toBe("From the future — written by a newer pbot: update pbot-history to read it");
		expect(entry?.qa).toBe(0);
		expect(listed.sessions.map((s) => s.sessionId).sort()).toEqual(answers.sessions.sessions.map((s) => s.sessionId).sort());
		expect(service.takeWarnings().join("\n")).toMatch(new RegExp(`archive ${BAD} was written by a newer pbot \\(archive version 99\\)`));
		// Said again by the next process, which has nothing else to say.
		const next = open();
		await next.search({ query: "the" });
		expect(next.takeWarnings()).toEqual([expect.stringMatching(/newer pbot/)]);
		for (const id of GOOD) expect((await open().read({ id })).id).toBe(id);
		// A node of it is not read, and the error says why it may be unknown.
		const qaOfIt = Object.keys(archive.nodes as object)[0] as string;
		await expect(open().read({ id: qaOfIt })).rejects.toThrow(
			`id: unknown node "${qaOfIt}" (1 session(s) here were written by a newer pbot and are not read: update pbot-history to read them)`,
		);
		// A write for its session (its native file grew) leaves it as it is.
		expect(sessionDir).toBeTruthy();
		await open().ingest();
		expect(await readFile(file, "utf8")).toBe(newer);
	});
});

describe("archives looked at through the history folder's time", () => {
	it("a still folder vouches for its archives (no stat each); a write by pbot changes it; ingest looks at every archive anyway", async () => {
		const { workspace, sessions: sessionDir, open, answers } = await setup();
		// The folder has been still for a minute: its time is trusted, and the revisions are kept.
		const past = new Date(Date.now() - 60_000);
		await utimes(historyDir(workspace), past, past);
		expect(await open().search({ query: "the", limit: 50 })).toEqual(answers.search);
		const cache = JSON.parse(await readFile(`${workspace}/.pi/pbot/text/archives.cache`, "utf8")) as { revisions: Record<string, string> };
		expect(Object.keys(cache.revisions).sort()).toEqual(KEYS.map(fixtureSessionId).sort());
		// Cut short in place by hand (the folder's time unchanged): a query answers from the projection as it was ...
		const file = archivePath(workspace, BAD);
		await truncate(file, 10);
		await utimes(historyDir(workspace), past, past);
		const query = open();
		expect(await query.search({ query: "the", limit: 50 })).toEqual(answers.search);
		expect(query.takeWarnings()).toEqual([]);
		// ... and ingest looks at every archive: moved aside and extracted again.
		const report = await open().refresh({ checkArchives: true });
		expect(report.warnings.join("\n")).toMatch(new RegExp(`archive ${BAD}: .*kept as`));
		expect(await asides(workspace)).toHaveLength(1);
		// A write by pbot (a grown session file, ingested by another process) changes the folder: the next query sees it.
		await utimes(historyDir(workspace), past, past);
		await open().search({ query: "the" }); // the cache taken again
		const name = (await readdir(sessionDir)).find((n) => n.includes(GOOD[0] as string)) as string;
		const lastId = (JSON.parse((await readFile(`${sessionDir}/${name}`, "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
		const { appendFile } = await import("node:fs/promises");
		const { jsonl, reply, user } = await import("../helpers/entries.ts");
		await appendFile(`${sessionDir}/${name}`, jsonl([user("rc-u", lastId, "Where did the cormorant go?"), reply("rc-a", "rc-u", "Out to sea.")]));
		await open().refresh();
		const after = open();
		expect((await after.search({ query: "cormorant" })).total).toBe(1);
	});
});
