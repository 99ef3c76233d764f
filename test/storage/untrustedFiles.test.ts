/**
 * Files a cloned repository can carry (git stores symbolic links) or a person can leave where pbot
 * keeps its own: a dangling link, a link to a file outside the workspace, a FIFO, at an archive's
 * name, at `checkpoints.json`, at a lock. None is followed, read or waited on; each is named in a
 * warning; every other session is served as usual; nothing outside the workspace changes. A hang
 * fails the test by its timeout.
 */
import { execFileSync } from "node:child_process";
import { appendFile, mkdtemp, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { lstatSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { archivePath, historyDir } from "../../src/storage/history-files/index.ts";
import { jsonl, reply, user } from "../helpers/entries.ts";
import { fixtureFile, fixtureSessionId, fixtureWorkspace, ingestedFixtureWorkspace } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

const KEYS = ["tools-thinking", "error-reply", "unicode-image", "long-answer", "many-qa-72"] as const;

function setup() {
	return ingestedFixtureWorkspace(KEYS, cleanups);
}

/** A Q&A appended to a fixture's native file: the next refresh must write its archive. */
async function grow(sessions: string, key: string, word: string): Promise<void> {
	const file = join(sessions, fixtureFile(key));
	const lastId = (JSON.parse((await readFile(file, "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
	await appendFile(file, jsonl([user(`${word}-u`, lastId, `Where is the ${word}?`), reply(`${word}-a`, `${word}-u`, `The ${word} is here.`)]));
}

describe("files pbot did not make, where it keeps its own", () => {
	it("a dangling link, a FIFO and a link to a file outside, at archives' names: refused and named; the other sessions answer; nothing outside changes", {
		timeout: 30_000,
	}, async () => {
		const { workspace, sessions, open } = await setup();
		const [dangling, fifo, outsideLinked, ...good] = KEYS.map(fixtureSessionId);
		const before = new Map<string, unknown>();
		for (const id of good) before.set(id as string, await open().search({ query: "the", sessionId: id }));
		const outside = await mkdtemp(join(tmpdir(), "pbot-outside-"));
		cleanups.push(outside);
		const outsideFile = join(outside, "precious.json");
		await writeFile(outsideFile, "do not touch\n");

		await rm(archivePath(workspace, dangling as string));
		await symlink(join(outside, "nothing-here.json"), archivePath(workspace, dangling as string));
		await rm(archivePath(workspace, fifo as string));
		execFileSync("mkfifo", [archivePath(workspace, fifo as string)]);
		await rm(archivePath(workspace, outsideLinked as string));
		await symlink(outsideFile, archivePath(workspace, outsideLinked as string));

		const service = open();
		expect((await service.search({ query: "the" })).total).toBeGreaterThan(0);
		const warnings = service.takeWarnings().join("\n");
		expect(warnings).toMatch(new RegExp(`${dangling}\\.json is a symbolic link`));
		expect(warnings).toMatch(new RegExp(`${fifo}\\.json is a FIFO`));
		expect(warnings).toMatch(new RegExp(`${outsideLinked}\\.json is a symbolic link`));
		// The other sessions answer as before.
		for (const id of good) expect(await service.search({ query: "the", sessionId: id })).toEqual(before.get(id as string));

		// New Q&A for those sessions: their writes are refused (no loop, no write through the links).
		for (const key of KEYS.slice(0, 3)) await grow(sessions, key, "flamingo");
		const writer = open();
		const report = await writer.refresh();
		const said = [...report.warnings, ...writer.takeWarnings()].join("\n");
		for (const id of [dangling, fifo, outsideLinked]) expect(said).toContain(`${id}.json is`);
		expect(await readFile(outsideFile, "utf8")).toBe("do not touch\n");
		expect(await readlink(archivePath(workspace, dangling as string))).toBe(join(outside, "nothing-here.json"));
		expect(lstatSync(archivePath(workspace, fifo as string)).isFIFO()).toBe(true);
		// The good sessions still take new Q&A.
		await grow(sessions, KEYS[3], "pelican");
		expect((await open().search({ query: "pelican" })).total).toBeGreaterThan(0);
	});

	it("a FIFO at checkpoints.json is named, not waited on: the files are read again instead", { timeout: 30_000 }, async () => {
		const { workspace, open } = await setup();
		const file = join(workspace, ".pi", "pbot", "checkpoints.json");
		await rm(file);
		execFileSync("mkfifo", [file]);
		const service = open();
		const report = await service.refresh();
		expect([...report.warnings, ...service.takeWarnings()].join("\n")).toMatch(/checkpoints: .*checkpoints\.json is a FIFO/);
		expect((await open().search({ query: "the" })).total).toBeGreaterThan(0);
	});

	it("a FIFO or a dangling link at an archive's lock: that write fails with a message naming it, nothing hangs", { timeout: 30_000 }, async () => {
		const { workspace, sessions, open } = await setup();
		const [fifoLocked, linkLocked] = KEYS.map(fixtureSessionId);
		execFileSync("mkfifo", [`${archivePath(workspace, fifoLocked as string)}.lock`]);
		await symlink(join(tmpdir(), "pbot-no-such-lock"), `${archivePath(workspace, linkLocked as string)}.lock`);
		for (const key of KEYS.slice(0, 2)) await grow(sessions, key, "heron");
		const service = open();
		const report = await service.refresh();
		const said = [...report.warnings, ...service.takeWarnings()].join("\n");
		expect(said).toMatch(new RegExp(`${fifoLocked}\\.json\\.lock is a FIFO`));
		expect(said).toMatch(new RegExp(`${linkLocked}\\.json\\.lock is a symbolic link`));
		expect(historyDir(workspace)).toContain(workspace);
	});
});

/** A search and a listing fail with `said`, and an ingest fails with it or reports it. */
async function expectRefusedByEveryCommand(open: () => HistoryService, said: RegExp): Promise<void> {
	await expect(open().search({ query: "the" })).rejects.toThrow(said);
	await expect(open().sessions()).rejects.toThrow(said);
	const report = await open()
		.ingest()
		.catch((err: Error) => ({ warnings: [err.message] }));
	expect(report.warnings.join("\n")).toMatch(said);
}

describe("a .pi/pbot that is not a real folder inside the workspace", () => {
	for (const [what, linked] of [
		[".pi/pbot", [".pi", "pbot"]],
		[".pi/pbot/history", [".pi", "pbot", "history"]],
		[".pi (leading outside)", [".pi"]],
	] as const) {
		it(`${what} as a symbolic link: refused with an error naming it; nothing read or written there`, { timeout: 30_000 }, async () => {
			const { workspace, open } = await setup();
			const elsewhere = await mkdtemp(join(tmpdir(), "pbot-elsewhere-"));
			cleanups.push(elsewhere);
			// What was there moves elsewhere and a link takes its place (as a cloned repository can carry it).
			const path = join(workspace, ...linked);
			execFileSync("cp", ["-a", path, join(elsewhere, "moved")]);
			await rm(path, { recursive: true });
			await symlink(join(elsewhere, "moved"), path);
			const listing = () => execFileSync("find", [elsewhere, "-printf", "%p %s %T@\n"], { encoding: "utf8" });
			const before = listing();
			await expectRefusedByEveryCommand(open, /is a symbolic link|outside the workspace/);
			expect(listing()).toBe(before);
		});
	}
});

describe("a .pi that is a link leading outside, before any history is kept there", () => {
	for (const [what, inside] of [
		["an empty folder", []],
		["a folder holding pbot without its history", ["pbot"]],
		["nothing (a dangling link)", undefined],
	] as const) {
		it(`to ${what}: refused before anything is made there, by every command`, { timeout: 30_000 }, async () => {
			const { workspace, open } = await setup();
			await rm(join(workspace, ".pi"), { recursive: true });
			const elsewhere = await mkdtemp(join(tmpdir(), "pbot-elsewhere-"));
			cleanups.push(elsewhere);
			const target = join(elsewhere, "target");
			if (inside !== undefined) execFileSync("mkdir", ["-p", join(target, ...inside)]);
			await symlink(target, join(workspace, ".pi"));
			const listing = () => execFileSync("find", [elsewhere, "-printf", "%p %s %T@\n"], { encoding: "utf8" });
			const before = listing();
			const refused =
				inside === undefined
					? /\.pi is a symbolic link to nothing/
					: /\.pi(\/pbot)? resolves to .*, outside the workspace: pbot neither reads nor writes there/;
			await expectRefusedByEveryCommand(open, refused);
			expect(listing()).toBe(before);
		});
	}
});

describe("a workspace that does not exist", () => {
	it("is never made: queries and an ingest fail naming it, and nothing appears at its path or above it", { timeout: 30_000 }, async () => {
		const ws = await fixtureWorkspace(["tools-thinking"]);
		cleanups.push(ws.workspace);
		// A mistyped workspace two folders below one that exists: `mkdir -p` of `.pi/pbot` made all three.
		const missing = join(ws.workspace, "typo", "project");
		const open = () => openWorkspaceHistory({ workspace: missing, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
		const named = /typo\/project is not an existing folder/;
		await expectRefusedByEveryCommand(open, named);
		expect(lstatSync(join(ws.workspace, "typo"), { throwIfNoEntry: false })).toBeUndefined();
		// The same workspace once it exists: the history is made in it as usual.
		execFileSync("mkdir", ["-p", missing]);
		const found = await open().search({ query: "the" });
		expect(found.total).toBeGreaterThan(0);
		expect(lstatSync(join(missing, ".pi", "pbot", ".gitignore")).isFile()).toBe(true);
	});
});

describe("a session folder that cannot be read", () => {
	it("is named in a warning and left out; the other folders' sessions are served (no query fails)", { timeout: 30_000 }, async () => {
		const ws = await fixtureWorkspace(KEYS);
		cleanups.push(ws.workspace);
		// A link to itself: listing it fails (ELOOP) as an unreadable folder does (EACCES cannot be made as root).
		const unreadable = join(ws.workspace, "unreadable-sessions");
		await symlink(unreadable, unreadable);
		const service = openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions, unreadable], agentDir: ws.agentDir, migrate: false });
		expect((await service.search({ query: "the" })).total).toBeGreaterThan(0);
		expect((await service.sessions()).total).toBe(KEYS.length);
		expect(service.takeWarnings().join("\n")).toMatch(/session folder .*unreadable-sessions cannot be read \(ELOOP\): its sessions are left out/);
	});
});
