/**
 * A hostile history folder, fuzzed (seeded): what a cloned repository can carry or a crash and a
 * careless hand can leave where pbot keeps its files — dangling links, links to files outside the
 * workspace, links to FIFOs, FIFOs, folders, empty, cut-short, non-JSON and wrong-shape files — at
 * random archives, their locks, the checkpoints, projection files and the heads file. Every query
 * returns (a hang fails by the timeout), every session whose files were left alone answers exactly
 * as before, and nothing outside the workspace changes.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { archivePath, historyDir, textDir } from "../../src/storage/history-files/index.ts";
import { fixtureSessionId, fixtureWorkspace } from "../query/helpers.ts";
import { prng, type Random } from "./fuzz/mutations.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

const KEYS = ["tools-thinking", "error-reply", "unicode-image", "long-answer", "many-qa-72", "compaction", "tree-branches", "fork-source"] as const;
const SEEDS = process.env.PBOT_HOSTILE_SEEDS ? Array.from({ length: Number(process.env.PBOT_HOSTILE_SEEDS) }, (_, i) => i + 1) : [1, 2, 3, 4, 5, 6];

type Plant = (path: string, outside: string, random: Random) => Promise<string>;
/** What can be put where pbot keeps a file; each returns a word for the failure message. */
const PLANTS: Plant[] = [
	async (path, outside) => {
		await symlink(join(outside, "nothing"), path);
		return "a dangling link";
	},
	async (path, outside) => {
		await symlink(join(outside, "precious.json"), path);
		return "a link outside";
	},
	async (path, outside) => {
		await symlink(join(outside, "fifo"), path);
		return "a link to a FIFO";
	},
	async (path) => {
		execFileSync("mkfifo", [path]);
		return "a FIFO";
	},
	async (path) => {
		await mkdir(path);
		return "a folder";
	},
	async (path) => {
		await writeFile(path, "");
		return "an empty file";
	},
	async (path) => {
		await writeFile(path, "{ not json");
		return "not JSON";
	},
	async (path) => {
		await writeFile(path, JSON.stringify({ format: "pbot-history", version: 1, session: { sessionId: "x" }, nodes: null }));
		return "a wrong shape";
	},
];

/** Replaces what is at `path` (if anything) by a random plant. */
async function plantAt(path: string, outside: string, random: Random, cut: boolean): Promise<string> {
	if (cut && random() < 0.3) {
		const size = (await readFile(path).catch(() => Buffer.alloc(0))).length;
		if (size > 10) {
			await truncate(path, Math.floor(size * random()));
			return "cut short";
		}
	}
	await rm(path, { recursive: true, force: true });
	return (PLANTS[Math.floor(random() * PLANTS.length)] as Plant)(path, outside, random);
}

describe("a hostile history folder (seeded)", () => {
	for (const seed of SEEDS) {
		it(`seed ${seed}: every query returns, untouched sessions answer as before, nothing outside changes`, { timeout: 60_000 }, async () => {
			const random = prng(seed);
			const ws = await fixtureWorkspace(KEYS);
			cleanups.push(ws.workspace);
			const open = () => openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
			await open().ingest();
			await open().search({ query: "the" }); // projection and heads file written
			const ids = KEYS.map(fixtureSessionId);
			const before = new Map<string, unknown>();
			for (const id of ids) before.set(id, await open().search({ query: "the", sessionId: id, limit: 50 }));

			const outside = await mkdtemp(join(tmpdir(), "pbot-hostile-outside-"));
			cleanups.push(outside);
			await writeFile(join(outside, "precious.json"), "keep me\n");
			execFileSync("mkfifo", [join(outside, "fifo")]);
			const outsideBefore = execFileSync("find", [outside, "-printf", "%p %s %T@\n"], { encoding: "utf8" });

			// Two to four sessions hit: their archive, its lock, or their projection file; sometimes the checkpoints or the heads file too.
			const hit = new Set<string>();
			const planted: string[] = [];
			const count = 2 + Math.floor(random() * 3);
			while (hit.size < count) hit.add(ids[Math.floor(random() * ids.length)] as string);
			for (const id of hit) {
				const where = random();
				const path =
					where < 0.5 ? archivePath(ws.workspace, id) : where < 0.75 ? `${archivePath(ws.workspace, id)}.lock` : join(textDir(ws.workspace), `${id}.text`);
				planted.push(`${path.slice(ws.workspace.length)}: ${await plantAt(path, outside, random, !path.endsWith(".lock"))}`);
			}
			if (random() < 0.5) planted.push(`checkpoints: ${await plantAt(join(ws.workspace, ".pi", "pbot", "checkpoints.json"), outside, random, true)}`);
			if (random() < 0.5) planted.push(`heads: ${await plantAt(join(textDir(ws.workspace), "heads.cache"), outside, random, true)}`);
			const label = planted.join("; ");

			for (let round = 0; round < 2; round++) {
				const service = open();
				await service.refresh({ checkArchives: true });
				expect((await service.sessions({ limit: 50 })).total, label).toBeGreaterThanOrEqual(ids.length - hit.size);
				for (const id of ids.filter((i) => !hit.has(i)))
					expect(await service.search({ query: "the", sessionId: id, limit: 50 }), `${label}: ${id}`).toEqual(before.get(id));
				for (const id of ids.filter((i) => !hit.has(i))) expect((await service.read({ id })).id, label).toBe(id);
			}
			expect(execFileSync("find", [outside, "-printf", "%p %s %T@\n"], { encoding: "utf8" }), label).toBe(outsideBefore);
			// Nothing pbot made points outside: every entry in its folders is a file or a folder of its own.
			for (const dir of [historyDir(ws.workspace), textDir(ws.workspace)]) expect((await readdir(dir)).length, label).toBeGreaterThan(0);
		});
	}
});

describe("a hostile ingest lease or summary claim", () => {
	/** What a repository can commit where pbot keeps its lease, each with a word for the failure message. */
	const LEASES: [string, (path: string, outside: string) => Promise<void>][] = [
		["a FIFO", async (path) => void execFileSync("mkfifo", [path])],
		["a link to a FIFO outside", async (path, outside) => symlink(join(outside, "fifo"), path)],
		["a dangling link", async (path, outside) => symlink(join(outside, "nothing"), path)],
		["a folder", async (path) => void (await mkdir(path))],
		// A live process of this host (init), fresh, naming no folder: what no pbot process writes.
		["pid 1 of this host", async (path) => writeFile(path, JSON.stringify({ pid: 1, host: hostname(), at: new Date().toISOString(), token: "x" }))],
	];
	for (const [what, plant] of LEASES) {
		it(`ingests at once past ${what} in .pi/pbot/ingest.lock, and past the same as a summary claim`, { timeout: 30_000 }, async () => {
			const ws = await fixtureWorkspace(KEYS);
			cleanups.push(ws.workspace);
			const outside = await mkdtemp(join(tmpdir(), "pbot-hostile-lease-"));
			cleanups.push(outside);
			execFileSync("mkfifo", [join(outside, "fifo")]);
			const outsideBefore = execFileSync("find", [outside, "-printf", "%p %s %T@\n"], { encoding: "utf8" });
			await mkdir(historyDir(ws.workspace), { recursive: true });
			await plant(join(ws.workspace, ".pi", "pbot", "ingest.lock"), outside);
			const id = fixtureSessionId("many-qa-72");
			await plant(`${archivePath(ws.workspace, id)}.summaries.lock`, outside);
			const waits: unknown[] = [];
			const service = openWorkspaceHistory({
				workspace: ws.workspace,
				sessionDirs: [ws.sessions],
				agentDir: ws.agentDir,
				migrate: false,
				onWait: (h) => void waits.push(h),
			});
			const report = await service.ingest();
			// Read here, never waited for (a hang fails by the timeout).
			expect(report.sessions.length, what).toBe(KEYS.length);
			expect(waits, what).toEqual([]);
			// The summary claim is taken or, where it cannot be, the pass goes on: nothing blocks it.
			const claims = service.summaryTarget();
			expect(await claims.claim?.(id), what).toBe(true);
			await claims.releaseClaims?.();
			expect(execFileSync("find", [outside, "-printf", "%p %s %T@\n"], { encoding: "utf8" }), what).toBe(outsideBefore);
		});
	}
});
