/**
 * Long work on the main thread of a process people type into hands the event loop back now and
 * then. Inside Pi, the extension shares one thread with the terminal UI: a search reads its files
 * synchronously (faster than through the thread pool, see docs/architecture.md), and a catch-up
 * that makes the search text again from the archives runs for seconds. Without a pause, every key
 * pressed meanwhile waits for the whole of it before it is echoed (3.7 s, measured, after `text/`
 * was deleted). Awaiting a promise that is already resolved is no pause: only microtasks run then,
 * never input, timers or rendering.
 */

/** How long work runs before it lets the event loop turn: about one frame of the terminal. */
export const SLICE_MS = 16;

/**
 * Milliseconds on a monotonic clock. Not `performance.now()`: the global `performance` loads Node's
 * `perf_hooks` when first touched (≈ 0.7 ms of every CLI query process, which slices its scan).
 */
export function monotonicMs(): number {
	const [seconds, nanoseconds] = process.hrtime();
	return seconds * 1000 + nanoseconds / 1e6;
}

export class TimeSlice {
	private started = monotonicMs();

	constructor(private readonly budgetMs: number = SLICE_MS) {}

	/**
	 * `undefined` while the slice lasts (awaiting it costs a microtask); once it is used up, a
	 * promise that resolves after a whole turn of the event loop (`loopTurn`), when a new slice starts.
	 */
	pause(): Promise<void> | undefined {
		if (monotonicMs() - this.started < this.budgetMs) return undefined;
		return loopTurn().then(() => {
			this.started = monotonicMs();
		});
	}
}

/**
 * Resolves after a whole turn of the event loop: timers, input and I/O callbacks run first. Two
 * `setImmediate`s: work that began in an I/O callback (a file change, a key) is in the loop's poll
 * phase, and one `setImmediate` from there runs in the same turn, before any timer or input (a
 * 140 ms catch-up after an agent run stayed whole).
 */
export function loopTurn(): Promise<void> {
	return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
