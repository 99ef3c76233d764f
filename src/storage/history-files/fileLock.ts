import { promises as fsp } from "node:fs";
import { randomBytes } from "../../services/history/model/lazyCrypto.ts";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import type { LeaseHolder } from "../../services/history/service/ports.ts";
import { readRegularFile, readRegularText } from "./regularFile.ts";

/**
 * A lock file beside the file it guards (`<file>.lock`), for the read–merge–write of an archive by
 * several processes.
 *
 * Taking it: the lock file is created with `O_EXCL` (`wx`), holding `{ pid, host, at, token }` (and
 * `scope` when the caller gives one). When
 * it exists, its holder is waited for, unless the lock is stale:
 * - its holder is a process of this host that is gone (`kill(pid, 0)` says `ESRCH`), or this very
 *   thread of this process without holding it (a pid reused after a crash); another thread of this
 *   process (a bulk ingest's worker) is taken to hold it, until the lock's age says otherwise;
 * - or it is older than `staleMs` (a holder on another host, a pid reused by another program, a
 *   holder stopped for good): a holder keeps it for one read, merge and write, milliseconds;
 * - or it is empty and older than a second (its creator died between creating and filling it);
 * - or, for a caller that gives a `scope`, it names another one or none (a lock copied with its
 *   workspace, or written by hand: a repository can commit one naming pid 1).
 * A lock held for a whole run, not one write (the ingest lease, a summary claim), has its age
 * renewed while held (`heartbeatMs`). A stale lock is broken by renaming it aside, checking that
 * what was renamed is the lock judged stale (if a new holder had taken it meanwhile, it is put
 * back), and deleting it. Releasing deletes the lock only if it is still ours. Within one process,
 * callers of the same lock are queued.
 *
 * Reading a lock file and its age is synchronous (a hundred bytes from the page cache: microseconds,
 * several times less CPU than through the promise API). Creating, renaming and deleting it are
 * not: they wait on the file system's journal, which another process's fsync can hold for
 * milliseconds, and Pi's event loop must not wait with it.
 */

export interface FileLockOptions {
	/** A lock older than this is stale whoever holds it. Default 30 s. */
	readonly staleMs?: number;
	/** Give up waiting after this long (a `FileLockTimeout`). Default 60 s: longer than `staleMs`. `Infinity`: wait while the holder lives. */
	readonly timeoutMs?: number;
	/**
	 * While held, the lock's mtime is renewed this often, so a lock held for longer than `staleMs`
	 * (a whole ingest, not one write) is not judged stale while its holder works. Default: never.
	 */
	readonly heartbeatMs?: number;
	/** Told who holds the lock, once, when a caller has to wait for another holder. */
	readonly onWait?: (holder: LockHolder) => void;
	/** Stops waiting: the call rejects with the signal's reason (nothing was run). */
	readonly signal?: AbortSignal;
	/**
	 * What the lock is of, beyond its path: written into the lock, and a lock of another scope is
	 * stale (a lock file copied with its folder names the folder it was taken in, not this one).
	 */
	readonly scope?: string;
}

/**
 * The timing of a lock held for a whole run (the ingest lease, a summary claim), not one write:
 * renewed every 5 s while held, stale after 20 s without renewal (a holder gone on another host,
 * a stopped one). Judging a live holder stale costs only work done twice.
 */
export const RUN_LOCK_TIMING = { heartbeatMs: 5_000, staleMs: 20_000 } as const satisfies Pick<FileLockOptions, "heartbeatMs" | "staleMs">;

/** Who holds a lock another caller waits for (the service's `LeaseHolder`). */
export type LockHolder = LeaseHolder;

/** What a lock file holds. */
interface LockInfo {
	readonly pid: number;
	/** The holder's thread in its process (absent in locks of older versions: the main thread). */
	readonly thread?: number;
	readonly host: string;
	readonly at: string;
	readonly token: string;
	/** `FileLockOptions.scope` of its taker (absent when it gave none). */
	readonly scope?: string;
}

export class FileLockTimeout extends Error {
	override readonly name = "FileLockTimeout";
}

const DEFAULT_STALE_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 60_000;
/** An empty lock older than this lost its creator between `open` and `write`. */
const EMPTY_STALE_MS = 1_000;

/** Tokens: random per process, counted per lock taken (no system randomness per write). */
let processToken: string | undefined;

let threadId: number | undefined;
/**
 * This thread's id, from `worker_threads` loaded when a lock is first taken or judged: loading it
 * with the module cost every process ≈ 4 ms (a query that writes nothing takes no lock).
 */
function currentThreadId(): number {
	threadId ??= (createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads")).threadId;
	return threadId;
}
let tokenCounter = 0;

/** In-process queues, by lock path: a process never waits on a lock file it holds itself. */
const queues = new Map<string, Promise<unknown>>();
/** Tokens of the lock files this process holds now (by token: one file may be reached by two paths). */
const heldTokens = new Set<string>();

/** Runs `fn` holding the lock file `lockPath` (see the module comment). */
export function withFileLock<T>(lockPath: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
	const previous = queues.get(lockPath) ?? Promise.resolve();
	const run = previous
		.catch(() => undefined)
		.then(async () => {
			const token = await acquire(lockPath, options);
			const heartbeat = options.heartbeatMs !== undefined ? renewEvery(lockPath, token, options.heartbeatMs) : undefined;
			try {
				return await fn();
			} finally {
				if (heartbeat) clearInterval(heartbeat);
				await release(lockPath, token);
			}
		});
	queues.set(lockPath, run);
	return run.finally(() => {
		if (queues.get(lockPath) === run) queues.delete(lockPath);
	});
}

/**
 * Takes the lock file if nobody else holds it, without waiting: the release, or `undefined` when a
 * live holder (another process, or this one) has it. A stale lock is broken as `withFileLock` does.
 * For work another process may be doing already, which a second one should leave rather than
 * repeat (a session's summaries: paid calls). Held until the release is called; renewed every
 * `heartbeatMs` meanwhile.
 */
export async function tryFileLock(
	lockPath: string,
	options: Pick<FileLockOptions, "staleMs" | "heartbeatMs" | "scope"> = {},
): Promise<(() => Promise<void>) | undefined> {
	// Held, or being waited for, through `withFileLock` in this process.
	if (queues.has(lockPath)) return undefined;
	let token: string;
	try {
		token = await acquire(lockPath, { ...options, timeoutMs: 0 });
	} catch (err) {
		if (err instanceof FileLockTimeout) return undefined;
		throw err;
	}
	const heartbeat = options.heartbeatMs !== undefined ? renewEvery(lockPath, token, options.heartbeatMs) : undefined;
	let released: Promise<void> | undefined;
	return () => {
		if (heartbeat) clearInterval(heartbeat);
		released ??= release(lockPath, token);
		return released;
	};
}

/** The lock file guarding `file`. */
export function lockPathOf(file: string): string {
	return `${file}.lock`;
}

/** Names used for stale locks while they are broken; readers of the folder skip them. */
export function isLockLeftover(name: string): boolean {
	return name.endsWith(".lock") || (name.startsWith(".") && name.endsWith(".stale"));
}

async function acquire(lockPath: string, options: FileLockOptions): Promise<string> {
	const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
	const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
	processToken ??= randomBytes(8).toString("hex");
	const token = `${processToken}${(tokenCounter++).toString(16)}`;
	const thread = currentThreadId();
	const info: LockInfo = {
		pid: process.pid,
		...(thread !== 0 ? { thread } : {}),
		host: hostname(),
		at: new Date().toISOString(),
		token,
		...(options.scope !== undefined ? { scope: options.scope } : {}),
	};
	let told = false;
	for (let attempt = 0; ; attempt++) {
		options.signal?.throwIfAborted();
		// Held before the file exists: a caller of this process that reads the file while it is
		// being written (under another path to it) must not judge it a leftover of a dead pid.
		heldTokens.add(token);
		try {
			// One call: created with O_EXCL, filled, closed. A crash between creating and filling
			// leaves an empty lock, judged by its age.
			await fsp.writeFile(lockPath, JSON.stringify(info), { flag: "wx", mode: 0o644 });
			return token;
		} catch (err) {
			heldTokens.delete(token);
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
		}
		const current = inspect(lockPath);
		// Released meanwhile: try again, but not past the deadline (nothing here loops unbounded).
		if (current === undefined && Date.now() <= deadline) continue;
		if (current === undefined) throw new FileLockTimeout(`${basename(lockPath)} kept appearing and vanishing`);
		if (isStale(current, staleMs, options.scope)) {
			await breakStale(lockPath, current.info?.token);
			continue;
		}
		if (Date.now() > deadline) {
			const who = current.info ? `pid ${current.info.pid} on ${current.info.host} since ${current.info.at}` : "an unknown holder";
			throw new FileLockTimeout(`${basename(lockPath)} is held by ${who}`);
		}
		if (!told && current.info && options.onWait) {
			told = true;
			options.onWait({ pid: current.info.pid, host: current.info.host, since: current.info.at });
		}
		// Jittered, growing waits: two waiters do not retry in step.
		await sleep(Math.min(50, 2 + attempt * 2) * (0.5 + Math.random()), options.signal);
	}
}

async function release(lockPath: string, token: string): Promise<void> {
	heldTokens.delete(token);
	// Never delete a lock somebody else took after judging ours stale.
	const text = readRegularText(lockPath);
	if (text === undefined || parseInfo(text).info?.token !== token) return;
	try {
		await fsp.unlink(lockPath);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
	}
}

interface LockState {
	readonly info?: LockInfo;
	readonly ageMs: number;
}

function inspect(lockPath: string): LockState | undefined {
	// Never through a link, never waiting on a FIFO: anything but a regular file is refused (an error naming it).
	const read = readRegularFile(lockPath);
	return read ? { ...parseInfo(read.bytes.toString("utf8")), ageMs: Date.now() - read.stat.mtimeMs } : undefined;
}

function parseInfo(text: string): { info?: LockInfo } {
	try {
		const v = JSON.parse(text) as Partial<LockInfo>;
		if (typeof v.pid === "number" && typeof v.host === "string" && typeof v.token === "string") {
			return {
				info: {
					pid: v.pid,
					...(typeof v.thread === "number" ? { thread: v.thread } : {}),
					host: v.host,
					at: typeof v.at === "string" ? v.at : "",
					token: v.token,
					...(typeof v.scope === "string" ? { scope: v.scope } : {}),
				},
			};
		}
	} catch {
		// empty or half-written: judged by age
	}
	return {};
}

function isStale(state: LockState, staleMs: number, scope?: string): boolean {
	if (state.ageMs > staleMs) return true;
	const { info } = state;
	if (!info) return state.ageMs > EMPTY_STALE_MS;
	if (scope !== undefined && info.scope !== scope) return true;
	if (info.host !== hostname()) return false;
	if (info.pid === process.pid) return (info.thread ?? 0) === currentThreadId() && !heldTokens.has(info.token);
	return !isAlive(info.pid);
}

/** Whether a process of this host is running. `EPERM`: it runs, as another user. */
export function isAlive(pid: number): boolean {
	if (!Number.isInteger(pid) || pid <= 0) return false;
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		return (err as NodeJS.ErrnoException).code === "EPERM";
	}
}

/**
 * Removes a stale lock without removing a fresh one: rename it aside (only one breaker can), check
 * that it is the one judged stale, delete it. If a new holder's lock was renamed instead, put it
 * back (`link` fails if yet another lock appeared meanwhile; that holder then keeps it).
 */
async function breakStale(lockPath: string, staleToken: string | undefined): Promise<void> {
	const aside = join(dirname(lockPath), `.${basename(lockPath)}.${process.pid}.${randomBytes(4).toString("hex")}.stale`);
	try {
		await fsp.rename(lockPath, aside);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
		throw err;
	}
	try {
		const text = await fsp.readFile(aside, "utf8").catch(() => "");
		const token = parseInfo(text).info?.token;
		if (token !== staleToken) await fsp.link(aside, lockPath).catch(() => undefined);
	} finally {
		await fsp.rm(aside, { force: true });
	}
}

/** Waits `ms`, or less if `signal` aborts (the caller's loop then throws its reason). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve) => {
		const timer = setTimeout(done, ms);
		function done(): void {
			clearTimeout(timer);
			signal?.removeEventListener("abort", done);
			resolve();
		}
		signal?.addEventListener("abort", done, { once: true });
	});
}

/**
 * Renews the lock's mtime every `ms` while it is still ours (a waiter judges a lock by its age):
 * the timer does not keep the process alive, and a failed renewal only lets the lock age.
 */
function renewEvery(lockPath: string, token: string, ms: number): NodeJS.Timeout {
	const timer = setInterval(() => {
		try {
			const text = readRegularText(lockPath);
			if (text === undefined || parseInfo(text).info?.token !== token) return;
		} catch {
			return; // no longer a regular file: not ours to renew
		}
		const now = new Date();
		fsp.utimes(lockPath, now, now).catch(() => undefined);
	}, ms);
	timer.unref();
	return timer;
}
