import { spawnSync } from "node:child_process";
import { watch } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyArchiveEvents, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import {
	archivePath,
	historyDir,
	listArchiveIds,
	memoryArchiveStore,
	readArchive,
	sweepLeftovers,
	writeArchive,
	writeJsonAtomic,
	workspaceArchiveStore,
} from "../../src/storage/history-files/index.ts";
import { stampOf, WrittenArchives } from "../../src/storage/history-files/writtenArchives.ts";
import { fixtureArchive } from "../helpers/fixtures.ts";
import { waitFor } from "../helpers/waitFor.ts";

let workspace: string;
beforeEach(async () => {
	workspace = await mkdtemp(join(tmpdir(), "pbot-archives-"));
});
afterEach(async () => {
	await rm(workspace, { recursive: true, force: true });
});

function withReady(archive: SessionArchive, index: number, text: string, at = "2026-04-01T00:00:00.000Z"): SessionArchive {
	const id = Object.keys(archive.summaries)[index] as string;
	const event: HistoryEvent = { type: "SummaryReady", sessionId: archive.session.sessionId, id, text, model: "faux/faux-1", at };
	return applyArchiveEvents({ sessions: { [archive.session.sessionId]: archive } }, [event]).sessions[archive.session.sessionId] as SessionArchive;
}

describe("writeArchive", () => {
	it("merges with what another writer stored since, under the lock", async () => {
		const base = await fixtureArchive("compaction");
		expect(Object.keys(base.summaries).length).toBeGreaterThan(1);
		await writeArchive(workspace, base);
		// Another process writes summary 0 (straight to the file, as its own atomic write would).
		await writeJsonAtomic(archivePath(workspace, base.session.sessionId), withReady(base, 0, "by the other process"));
		// This process, not knowing, writes summary 1.
		await writeArchive(workspace, withReady(base, 1, "by this process"));
		const onDisk = await readArchive(workspace, base.session.sessionId);
		const texts = Object.values(onDisk!.summaries)
			.filter((s) => s.status === "ready")
			.map((s) => s.text)
			.sort();
		expect(texts).toEqual(["by the other process", "by this process"]);
		expect((await readdir(historyDir(workspace))).sort()).toEqual([`${base.session.sessionId}.json`]);
	});

	it("makes a new archive without a lock file, and concurrent first writes of one session all land (merged)", async () => {
		const base = await fixtureArchive("compaction");
		const ids = Object.keys(base.summaries);
		expect(ids.length).toBeGreaterThan(1);
		// No archive yet: every writer finds none, the first link wins, the others merge under the
		// lock (a rename would have replaced the winner's summary). Twenty rounds, each a new folder.
		for (let round = 0; round < 20; round++) {
			const ws = join(workspace, `round-${round}`);
			await mkdir(ws);
			await Promise.all(ids.map((_, i) => writeArchive(ws, withReady(base, i, `summary ${i}`))));
			const onDisk = await readArchive(ws, base.session.sessionId);
			const texts = Object.values(onDisk!.summaries)
				.map((s) => s.text)
				.sort();
			expect(texts).toEqual(ids.map((_, i) => `summary ${i}`).sort());
			expect((await readdir(historyDir(ws))).sort()).toEqual([`${base.session.sessionId}.json`]);
		}
	});

	it("takes the lock only to update an archive, not to make a new one", async () => {
		const base = await fixtureArchive("compaction");
		await mkdir(historyDir(workspace), { recursive: true });
		const seen: string[] = [];
		const watcher = watch(historyDir(workspace), (_event, name) => name && seen.push(name));
		try {
			await writeArchive(workspace, base);
			// Events come in order: a lock file taken for this write would show before the archive does.
			await waitFor(() => seen.includes(`${base.session.sessionId}.json`), "the new archive's event");
			expect(seen.filter((n) => n.endsWith(".lock"))).toEqual([]);
			const before = seen.length;
			await writeArchive(workspace, withReady(base, 0, "an update"));
			await waitFor(() => seen.slice(before).some((n) => n.endsWith(".lock")), "the update's lock file");
		} finally {
			watcher.close();
		}
	});

	it("writes again after the history folder was removed meanwhile (it makes the folder again)", async () => {
		const archive = await fixtureArchive("compaction");
		await writeArchive(workspace, archive);
		await rm(historyDir(workspace), { recursive: true });
		await writeArchive(workspace, archive);
		expect(await readArchive(workspace, archive.session.sessionId)).toEqual(archive);
	});

	it("does not rewrite an archive that would not change", async () => {
		const base = await fixtureArchive("compaction");
		await writeArchive(workspace, withReady(base, 0, "text"));
		const file = archivePath(workspace, base.session.sessionId);
		const before = await readFile(file, "utf8");
		await writeFile(file, before.replace(/\n$/, "\n\n")); // same archive, other bytes: a rewrite would show
		await writeArchive(workspace, base);
		expect(await readFile(file, "utf8")).toBe(`${before}\n`);
	});

	it("keeps a damaged stored archive beside, for a person, and writes the new one", async () => {
		const base = await fixtureArchive("compaction");
		const file = archivePath(workspace, base.session.sessionId);
		await mkdir(historyDir(workspace), { recursive: true });
		await writeFile(file, "{ not json");
		await writeArchive(workspace, base);
		expect(await readArchive(workspace, base.session.sessionId)).toEqual(base);
		const names = await readdir(historyDir(workspace));
		const damaged = names.filter((n) => n.includes(".damaged-"));
		expect(damaged).toHaveLength(1);
		expect(await readFile(join(historyDir(workspace), damaged[0]!), "utf8")).toBe("{ not json");
		expect(await listArchiveIds(workspace)).toEqual([base.session.sessionId]);
	});

	it("never overwrites an archive of a newer format version, nor another program's file", async () => {
		const base = await fixtureArchive("compaction");
		const file = archivePath(workspace, base.session.sessionId);
		await mkdir(historyDir(workspace), { recursive: true });
		for (const [text, message] of [
			[JSON.stringify({ ...base, version: 99 }), /version 99/],
			[JSON.stringify({ ...base, format: "someone-else" }), /format "someone-else"/],
		] as const) {
			await writeFile(file, text);
			await expect(writeArchive(workspace, base)).rejects.toThrow(message);
			expect(await readFile(file, "utf8")).toBe(text);
		}
		expect(await readdir(historyDir(workspace))).toEqual([`${base.session.sessionId}.json`]);
	});
});

describe("a store that read an archive", () => {
	it("merges its next write with what it read while the file is as read, and reads again once another writer replaced it", async () => {
		const base = await fixtureArchive("many-qa-72");
		expect(Object.keys(base.summaries).length).toBeGreaterThan(2);
		const id = base.session.sessionId;
		const file = archivePath(workspace, id);
		await writeArchive(workspace, base);
		const written = new WrittenArchives();
		const store = workspaceArchiveStore(workspace, { written });
		const read = (await store.read(id)) as SessionArchive;
		expect(read).toEqual(base);
		// What it read is what the file holds while the file keeps its stamp: a write merges with it.
		expect(written.known(file, stampOf(file) as string)).toBe(read);
		await store.write(withReady(read, 1, "by this process"));
		expect((await readArchive(workspace, id))?.summaries[Object.keys(base.summaries)[1] as string]?.text).toBe("by this process");

		// Another process replaces the file: the stamp no longer matches, and the next write reads it again.
		const again = (await store.read(id)) as SessionArchive;
		await writeJsonAtomic(file, withReady(again, 0, "by the other process"));
		expect(written.known(file, stampOf(file) as string)).toBeUndefined();
		await store.write(withReady(withReady(again, 1, "by this process"), 2, "and this"));
		const texts = Object.values((await readArchive(workspace, id))?.summaries ?? {})
			.filter((s) => s.status === "ready")
			.map((s) => s.text)
			.sort();
		expect(texts).toEqual(["and this", "by the other process", "by this process"]);
	});
});

describe("memoryArchiveStore", () => {
	it("merges on write as the workspace store does", async () => {
		const base = await fixtureArchive("compaction");
		const store = memoryArchiveStore([withReady(base, 0, "first")]);
		await store.write(withReady(base, 1, "second"));
		const stored = await store.read(base.session.sessionId);
		expect(Object.values(stored!.summaries).filter((s) => s.status === "ready")).toHaveLength(2);
	});
});

describe("sweepLeftovers", () => {
	it("removes temporary files and stale-lock asides of processes that are gone, and keeps live and fresh ones", async () => {
		const dir = historyDir(workspace);
		await mkdir(dir, { recursive: true });
		const dead = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
		const names = {
			deadTemp: `.a.json.${dead}.0badc0de.tmp`,
			liveTemp: `.b.json.${process.ppid}.0badc0de.tmp`,
			ownTemp: `.c.json.${process.pid}.0badc0de.tmp`,
			deadAside: `.a.json.lock.${dead}.0badc0de.stale`,
			freshDeadTemp: `.d.json.${dead}.0badc0de.tmp`, // another host's write in progress, perhaps
			ancientLiveTemp: `.e.json.${process.ppid}.0badc0de.tmp`,
			archive: "a.json",
		};
		const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
		for (const [key, name] of Object.entries(names)) {
			await writeFile(join(dir, name), "x");
			const t = key === "freshDeadTemp" ? new Date() : minutesAgo(key === "ancientLiveTemp" ? 120 : 1);
			await utimes(join(dir, name), t, t);
		}
		expect(await sweepLeftovers(workspace)).toBe(3);
		expect((await readdir(dir)).sort()).toEqual([names.liveTemp, names.ownTemp, names.freshDeadTemp, names.archive].sort());
	});
});

describe("a store's first listing", () => {
	/** The history folder's time set back, as a folder still for a while is. */
	const settle = async () => {
		const past = new Date(Date.now() - 60_000);
		await utimes(historyDir(workspace), past, past);
	};

	it("sweeps leftovers that a cached listing saw, and takes the ids from a cached listing that saw none", async () => {
		const dir = historyDir(workspace);
		await mkdir(dir, { recursive: true });
		const dead = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
		const ids = ["019cdc1f-d680-7663-ac93-882da27c4d6a", "019cdc23-08d6-75e5-8cf8-4df4f91bdd63"];
		for (const id of ids) await writeFile(join(dir, `${id}.json`), "{}");
		const leftover = `.${ids[0]}.json.${dead}.0badc0de.tmp`;
		await writeFile(join(dir, leftover), "x");
		const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
		await utimes(join(dir, leftover), hoursAgo, hoursAgo);
		await mkdir(join(workspace, ".pi", "pbot", "text"), { recursive: true });
		await settle();
		// A catch-up of one process lists the folder (and keeps the listing); the next process's first listing sweeps.
		expect((await workspaceArchiveStore(workspace).revisions?.())?.size).toBe(2);
		expect(await workspaceArchiveStore(workspace).list()).toEqual(ids);
		expect((await readdir(dir)).sort()).toEqual(ids.map((id) => `${id}.json`));
		// Once the folder is still again, a listing finds nothing to sweep; the next store's ids come from it.
		await settle();
		expect((await workspaceArchiveStore(workspace).revisions?.())?.size).toBe(2);
		const cache = JSON.parse(await readFile(join(workspace, ".pi", "pbot", "text", "archives.cache"), "utf8")) as { leftovers?: boolean };
		expect(cache.leftovers).toBe(false);
		expect(await workspaceArchiveStore(workspace).list()).toEqual(ids);
		// An archive added since (by hand: no temporary file) is listed: the folder changed.
		const third = "019cdc24-5a6a-764e-9258-9d5d73d7056e";
		await writeFile(join(dir, `${third}.json`), "{}");
		expect(await workspaceArchiveStore(workspace).list()).toEqual([...ids, third]);
	});
});

describe("rejected lines of older archives", () => {
	it("lose the raw text older versions kept (`sample`) the first time they are read: the archive is written again without it", async () => {
		const archive = await fixtureArchive("malformed-lines");
		expect(archive.rejections.lines.length).toBeGreaterThan(0);
		const older = {
			...archive,
			rejections: { ...archive.rejections, lines: archive.rejections.lines.map((l) => ({ ...l, sample: "/home/someone/secret-token-123" })) },
		};
		await mkdir(historyDir(workspace), { recursive: true });
		await writeFile(archivePath(workspace, archive.session.sessionId), JSON.stringify(older));
		const { readArchiveWithRevision } = await import("../../src/storage/history-files/archiveFiles.ts");
		const read = await readArchiveWithRevision(workspace, archive.session.sessionId);
		expect(read?.archive.rejections.lines.map((l) => Object.keys(l).sort())).toEqual(archive.rejections.lines.map(() => ["bytes", "line", "reason"]));
		const stored = await readFile(archivePath(workspace, archive.session.sessionId), "utf8");
		expect(stored).not.toContain("secret-token");
		expect(stored).not.toContain("sample");
	});
});
