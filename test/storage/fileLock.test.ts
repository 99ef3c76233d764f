import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileLockTimeout, lockPathOf, tryFileLock, withFileLock } from "../../src/storage/history-files/fileLock.ts";
import { exited, spawnChild } from "../durability/children/spawn.ts";

let dir: string;
let lock: string;
beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "pbot-lock-"));
	lock = lockPathOf(join(dir, "a.json"));
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has ended. */
function deadPid(): number {
	const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
	return Number(r.stdout);
}

async function plantLock(info: Record<string, unknown> | string, ageMs = 0): Promise<void> {
	await writeFile(lock, typeof info === "string" ? info : JSON.stringify(info));
	if (ageMs > 0) {
		const t = new Date(Date.now() - ageMs);
		await utimes(lock, t, t);
	}
}

describe("withFileLock", () => {
	it("runs callers of one lock in this process one at a time, and removes the lock after", async () => {
		let inside = 0;
		let most = 0;
		await Promise.all(
			Array.from({ length: 10 }, () =>
				withFileLock(lock, async () => {
					most = Math.max(most, ++inside);
					await new Promise((r) => setTimeout(r, 2));
					inside--;
				}),
			),
		);
		expect(most).toBe(1);
		expect(await readdir(dir)).toEqual([]);
	});

	it("releases the lock when the work throws", async () => {
		await expect(withFileLock(lock, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
		expect(await readdir(dir)).toEqual([]);
		expect(await withFileLock(lock, async () => "again")).toBe("again");
	});

	it("takes over a lock whose holder process is gone", async () => {
		await plantLock({ pid: deadPid(), host: hostname(), at: new Date().toISOString(), token: "dead" });
		expect(await withFileLock(lock, async () => "ran", { timeoutMs: 2_000 })).toBe("ran");
		expect(await readdir(dir)).toEqual([]);
	});

	it("takes over a lock this process's pid holds without knowing it (a pid reused after a crash)", async () => {
		await plantLock({ pid: process.pid, host: hostname(), at: new Date().toISOString(), token: "earlier life" });
		expect(await withFileLock(lock, async () => "ran", { timeoutMs: 2_000 })).toBe("ran");
	});

	it("leaves a lock another thread of this process holds (a bulk ingest's worker), and waits for it", async () => {
		// The worker runs the build's copy of this module (a thread of plain Node runs no TypeScript).
		const built = pathToFileURL(join(process.cwd(), "dist", "storage", "history-files", "fileLock.js")).href;
		const worker = new Worker(
			`const { parentPort, workerData } = require("node:worker_threads");
			import(workerData.built).then(({ withFileLock }) =>
				withFileLock(workerData.lock, () => new Promise((release) => { parentPort.postMessage("held"); parentPort.once("message", release); })),
			).then(() => parentPort.postMessage("released"));`,
			{ eval: true, workerData: { built, lock } },
		);
		try {
			await new Promise((r) => worker.once("message", r));
			await expect(withFileLock(lock, async () => "ran", { timeoutMs: 300 })).rejects.toThrow(FileLockTimeout);
			const released = new Promise((r) => worker.once("message", r));
			worker.postMessage("release");
			await released;
			expect(await withFileLock(lock, async () => "ran", { timeoutMs: 2_000 })).toBe("ran");
		} finally {
			await worker.terminate();
		}
	});

	it("takes over a lock older than the stale age, even of a live process or another host", async () => {
		await plantLock({ pid: process.ppid, host: "another-host", at: "then", token: "old" }, 60_000);
		expect(await withFileLock(lock, async () => "ran", { staleMs: 30_000, timeoutMs: 2_000 })).toBe("ran");
	});

	it("takes over an empty lock (its creator died before filling it) once it is a second old", async () => {
		await plantLock("", 5_000);
		expect(await withFileLock(lock, async () => "ran", { timeoutMs: 2_000 })).toBe("ran");
	});

	it("waits for a live holder, and gives up with a clear error after the timeout", async () => {
		await plantLock({ pid: process.ppid, host: hostname(), at: "now", token: "live" });
		await expect(withFileLock(lock, async () => "ran", { timeoutMs: 200 })).rejects.toThrow(FileLockTimeout);
		await expect(withFileLock(lock, async () => "ran", { timeoutMs: 200 })).rejects.toThrow(/held by pid \d+ on /);
		setTimeout(() => void rm(lock), 150);
		expect(await withFileLock(lock, async () => "ran", { timeoutMs: 5_000 })).toBe("ran");
	});

	it("tells a waiter who holds the lock, once, and a signal stops the wait without running the work", async () => {
		await plantLock({ pid: process.ppid, host: hostname(), at: "2026-12-06T05:00:00.000Z", token: "live" });
		const told: unknown[] = [];
		const controller = new AbortController();
		let ran = false;
		const waiting = withFileLock(
			lock,
			async () => {
				ran = true;
			},
			{ timeoutMs: Number.POSITIVE_INFINITY, signal: controller.signal, onWait: (h) => void told.push(h) },
		);
		await new Promise((r) => setTimeout(r, 300));
		expect(told).toEqual([{ pid: process.ppid, host: hostname(), since: "2026-12-06T05:00:00.000Z" }]);
		controller.abort(new Error("stopped by the person"));
		await expect(waiting).rejects.toThrow("stopped by the person");
		expect(ran).toBe(false);
		expect(JSON.parse(await readFile(lock, "utf8")).token).toBe("live");
	});

	it("renews a held lock's age while it is held (heartbeatMs), so a long holder is not judged stale", async () => {
		const ages: number[] = [];
		await withFileLock(
			lock,
			async () => {
				for (let i = 0; i < 4; i++) {
					await new Promise((r) => setTimeout(r, 150));
					ages.push(Date.now() - (await stat(lock)).mtimeMs);
				}
			},
			{ heartbeatMs: 50 },
		);
		// Without renewal the last age would be ≥ 600 ms.
		expect(Math.max(...ages)).toBeLessThan(300);
		expect(await readdir(dir)).toEqual([]);
	});

	it("takes over a live holder's lock of another scope (copied with its folder), and waits for one of its own scope", async () => {
		await plantLock({ pid: process.ppid, host: hostname(), at: "now", token: "copied", scope: "1:111" });
		expect(await withFileLock(lock, async () => "ran", { timeoutMs: 2_000, scope: "1:222" })).toBe("ran");
		// One naming no scope (written by hand: no pbot process takes a scoped lock without one) is not waited for either.
		await plantLock({ pid: process.ppid, host: hostname(), at: "now", token: "unscoped" });
		expect(await withFileLock(lock, async () => "ran", { timeoutMs: 2_000, scope: "1:222" })).toBe("ran");
		await plantLock({ pid: process.ppid, host: hostname(), at: "now", token: "same", scope: "1:222" });
		await expect(withFileLock(lock, async () => "ran", { timeoutMs: 200, scope: "1:222" })).rejects.toThrow(FileLockTimeout);
		expect(await tryFileLock(lock, { scope: "1:222" })).toBeUndefined();
		const release = await tryFileLock(lock, { scope: "1:333" });
		expect(JSON.parse(await readFile(lock, "utf8")).scope).toBe("1:333");
		await release?.();
	});

	it("does not delete a lock that somebody else took after judging its own stale", async () => {
		await withFileLock(lock, async () => {
			await writeFile(lock, JSON.stringify({ pid: process.ppid, host: hostname(), at: "now", token: "theirs" }));
		});
		expect(JSON.parse(await readFile(lock, "utf8")).token).toBe("theirs");
	});

	it("excludes other processes: three processes incrementing one counter lose no increment", async () => {
		const counter = join(dir, "counter");
		await writeFile(counter, "0");
		const children = [0, 1, 2].map(() => spawnChild("lockCounter.ts", [counter, "40"]));
		const results = await Promise.all(children.map(exited));
		expect(
			results.map((r) => r.code),
			children.map((c) => c.stderrText()).join("\n"),
		).toEqual([0, 0, 0]);
		expect(Number(await readFile(counter, "utf8"))).toBe(120);
		expect(await readdir(dir)).toEqual(["counter"]);
	});
});

describe("tryFileLock", () => {
	it("takes a free lock and gives a release; a second try, in this process or while another live process holds it, gets nothing", async () => {
		const release = await tryFileLock(lock);
		expect(release).toBeTypeOf("function");
		expect(await tryFileLock(lock)).toBeUndefined();
		await release?.();
		expect(await readdir(dir)).toEqual([]);
		await plantLock({ pid: process.ppid, host: hostname(), at: "now", token: "theirs" });
		expect(await tryFileLock(lock)).toBeUndefined();
		expect(JSON.parse(await readFile(lock, "utf8")).token).toBe("theirs");
	});

	it("takes over a lock whose holder is gone, and leaves a lock withFileLock holds in this process", async () => {
		await plantLock({ pid: deadPid(), host: hostname(), at: "now", token: "dead" });
		const release = await tryFileLock(lock);
		expect(release).toBeTypeOf("function");
		await release?.();
		await withFileLock(lock, async () => {
			expect(await tryFileLock(lock)).toBeUndefined();
		});
	});
});

describe("withFileLock across two paths to one file", () => {
	it("does not take a lock this process holds under another path (a symlinked folder) for stale", async () => {
		const dir2 = await mkdtemp(join(tmpdir(), "pbot-lock-alias-"));
		const alias = join(dir2, "alias");
		await symlink(dir, alias);
		const other = lockPathOf(join(alias, "a.json"));
		let inside = 0;
		let most = 0;
		const work = async () => {
			most = Math.max(most, ++inside);
			await new Promise((r) => setTimeout(r, 30));
			inside--;
		};
		await Promise.all([withFileLock(lock, work), withFileLock(other, work)]);
		expect(most).toBe(1);
		await rm(dir2, { recursive: true, force: true });
	});
});
