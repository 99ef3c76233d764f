/**
 * Two writers (docs/archive-format.md, "Two writers"): two pbot processes ingest and summarize one workspace at once while its
 * session files grow. Neither may tear a file or lose the other's nodes or summaries.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { deepEqual } from "../../src/services/history/model/deepEqual.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import { historyDir, memoryArchiveStore, parseArchive } from "../../src/storage/history-files/index.ts";
import { FIXTURES_DIR } from "../helpers/fixtures.ts";
import { exited, lineFrom, spawnChild } from "./children/spawn.ts";
import { prng } from "./fuzz/mutations.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

/** Every archive, parsed; a file that does not parse is a torn write. */
async function readAll(workspace: string): Promise<{ archives: Map<string, SessionArchive>; torn: string[] }> {
	const dir = historyDir(workspace);
	const archives = new Map<string, SessionArchive>();
	const torn: string[] = [];
	let names: string[] = [];
	try {
		names = await readdir(dir);
	} catch {
		return { archives, torn };
	}
	for (const name of names.filter((n) => n.endsWith(".json") && !n.startsWith("."))) {
		let text: string;
		try {
			text = await readFile(join(dir, name), "utf8");
		} catch {
			continue; // replaced between the listing and the read
		}
		try {
			archives.set(name.slice(0, -5), parseArchive(text, name.slice(0, -5)));
		} catch (err) {
			torn.push(`${name}: ${(err as Error).message}`);
		}
	}
	return { archives, torn };
}

/** Closed Q&A and ready summaries of `before` that `after` lacks. */
function lost(before: Map<string, SessionArchive>, after: Map<string, SessionArchive>): string[] {
	const out: string[] = [];
	for (const [id, old] of before) {
		const now = after.get(id);
		for (const [nodeId, node] of Object.entries(old.nodes)) if (node.completed && !now?.nodes[nodeId]) out.push(nodeId);
		for (const [sid, s] of Object.entries(old.summaries)) if (s.status === "ready" && now?.summaries[sid]?.status !== "ready") out.push(sid);
	}
	return out;
}

describe("two processes on one workspace", () => {
	it("ingest and summarize at once, round after round, without a torn file or a lost node or summary", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-two-writers-"));
		cleanups.push(() => rm(root, { recursive: true, force: true }));
		const workspace = join(root, "workspace");
		const natives = join(root, "natives");
		const stop = join(root, "stop");
		await mkdir(workspace, { recursive: true });
		await mkdir(natives, { recursive: true });
		const random = prng(42);

		// Every fixture session, written a random part at a time.
		const sessions: { file: string; lines: string[]; written: number }[] = [];
		for (const name of (await readdir(FIXTURES_DIR)).filter((n) => /^\d{4}-.*\.jsonl$/.test(n))) {
			const lines = (await readFile(join(FIXTURES_DIR, name), "utf8")).split("\n").filter((l) => l !== "");
			const s = { file: join(natives, name), lines, written: 1 + Math.floor(random() * lines.length) };
			sessions.push(s);
			await writeFile(s.file, `${lines.slice(0, s.written).join("\n")}\n`);
		}

		const writers = ["A", "B"].map((name) => {
			const child = spawnChild("summarizeChild.ts", ["writer", workspace, natives, name, stop]);
			const made: string[] = [];
			let buffer = "";
			child.stdout?.setEncoding("utf8").on("data", (d: string) => {
				buffer += d;
				for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
					const line = buffer.slice(0, nl);
					buffer = buffer.slice(nl + 1);
					if (line.startsWith("made ")) made.push(line.split(" ")[2] as string);
				}
			});
			return { name, child, made, ready: lineFrom(child, "ready") };
		});
		await Promise.all(writers.map((w) => w.ready));

		// Rounds: grow the files while both run, and read every archive all the while.
		let previous = new Map<string, SessionArchive>();
		let reads = 0;
		const torn: string[] = [];
		const lostOnTheWay: string[] = [];
		const poll = async () => {
			const { archives, torn: t } = await readAll(workspace);
			reads += archives.size;
			torn.push(...t);
			lostOnTheWay.push(...lost(previous, archives));
			previous = archives;
		};
		for (let round = 0; round < 20; round++) {
			for (const s of sessions) {
				if (s.written < s.lines.length && random() < 0.4) {
					s.written = Math.min(s.lines.length, s.written + 1 + Math.floor(random() * 4));
					await writeFile(s.file, `${s.lines.slice(0, s.written).join("\n")}\n`);
				}
			}
			const until = Date.now() + 100;
			while (Date.now() < until) await poll();
		}
		// Everything written, then stop: each writer refreshes once more and summarizes what is left.
		for (const s of sessions) await writeFile(s.file, `${s.lines.join("\n")}\n`);
		await writeFile(stop, "");
		const ends = writers.map((w) => exited(w.child));
		let running = true;
		void Promise.all(ends).then(() => (running = false));
		while (running) await poll();
		for (const [i, end] of (await Promise.all(ends)).entries()) expect(end.code, writers[i]!.child.stderrText()).toBe(0);
		await poll();

		expect(torn).toEqual([]);
		expect(lostOnTheWay).toEqual([]);
		expect(reads).toBeGreaterThan(100);
		for (const w of writers) expect(w.made.length, `summaries made by ${w.name}`).toBeGreaterThan(0);

		// The end: every Q&A and branch of a clean run, every summary ready, each made one still ready.
		const clean = new HistoryService({ store: memoryArchiveStore(), discovery: fileDiscovery({ workspace, sessionDirs: [natives] }) });
		await clean.ingest();
		await clean.load();
		const expected = clean.archiveState().sessions;
		const final = (await readAll(workspace)).archives;
		expect([...final.keys()].sort()).toEqual(Object.keys(expected).sort());
		for (const [id, archive] of final) {
			expect(deepEqual(archive.nodes, expected[id]!.nodes), `Q&A of ${id}`).toBe(true);
			expect(archive.branches, `branches of ${id}`).toEqual(expected[id]!.branches);
			for (const sid of Object.keys(expected[id]!.summaries)) expect(archive.summaries[sid]?.status, `${id} ${sid}`).toBe("ready");
			// Beyond those, only summaries made over a Q&A that was still open and later superseded
			// (the archive keeps a text once made, as one process alone does).
			const reached = new Set(archive.branches.flatMap((b) => b.nodeIds));
			for (const s of Object.values(archive.summaries).filter((x) => !(x.id in expected[id]!.summaries))) {
				expect(s.status, s.id).toBe("ready");
				expect(s.level === 1 && s.childIds.every((c) => reached.has(c)), `${s.id} is reachable yet not planned`).toBe(false);
			}
		}
		const readyIds = new Set([...final.values()].flatMap((a) => Object.keys(a.summaries)));
		for (const w of writers) for (const id of w.made) expect(readyIds.has(id), `${w.name} made ${id}`).toBe(true);
		const authors = new Set([...final.values()].flatMap((a) => Object.values(a.summaries).map((s) => / by (\w)\.$/.exec(s.text ?? "")?.[1])));
		expect(authors.size).toBeGreaterThan(0);
		// Nothing left behind: no lock, no temporary file.
		expect((await readdir(historyDir(workspace))).filter((n) => !n.endsWith(".json"))).toEqual([]);
	}, 60_000);
});
