import { closeSync, readSync, type Stats, statSync } from "node:fs";
import { dirname } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { Observable, Subject, type Subscription } from "rxjs";
import type { HistoryEvent } from "../../../services/history/model/events.ts";
import { sessionPipeline } from "../../../services/history/ingest/sessionPipeline.ts";
import { openSessionFile } from "./sessionFiles.ts";
import { TimeSlice } from "../../../services/history/service/timeSlice.ts";

/** Longer than chokidar's 50 ms throttle of 'change' events. */
const SETTLE_MS = 80;
/** Bytes of the file's start that identify it: a rewrite with other content shows here. */
const HEAD_BYTES = 256;
/**
 * What is read at a time, into one buffer kept for the tail (the pipeline keeps no chunk). A long
 * file (the whole of a resumed 30 MB session, as the tail starts) is fed a chunk at a time, the
 * event loop turning between chunks, and derived once, after the last: read in one piece it held
 * Pi's loop 300 ms, a third of that in page faults of a fresh 30 MB buffer.
 */
const CHUNK_BYTES = 1 << 20;
const NOTHING = new Uint8Array(0);

export interface TailOptions {
	/** Session id from the file name, for a file whose header is not written yet. */
	readonly fallbackSessionId?: string;
	/** Called with a read error; the tail keeps going (the file may come back). */
	readonly onError?: (err: Error) => void;
	/**
	 * Handed, when the tail starts, a function that reads what was appended right now (after any
	 * read in flight), without waiting for the watcher. It resolves with the file's `stat` taken
	 * before that read when the read reached the file's end, every byte of it fed to the pipeline
	 * (so the events of every whole line have been emitted); else `undefined` (no file yet, an
	 * error, the tail closed). Pi's runtime calls it before each query: see `HistoryRuntime`.
	 */
	readonly readNow?: (read: () => Promise<Stats | undefined>) => void;
	/**
	 * The folder watcher starts once this settles (Pi's runtime: after the start's ingest and
	 * warm-up). chokidar's first scan of a session folder of a thousand files took ≈ 10 ms of the
	 * first search's time when both ran at once. Until the watcher is up the file is read when asked
	 * (`readNow`: every query and refresh asks) and once as the watcher is ready.
	 */
	readonly watchFrom?: Promise<unknown>;
	/**
	 * While this says so, a change the watcher reports is not read: the owner reads when it needs
	 * the file's state (`readNow`). Pi's runtime holds the tail while an agent runs: its messages
	 * are read once, when the run ends or a query asks, instead of at every message (in a 30 MB
	 * session each read re-derived and re-projected the session, ≈ 60–90 ms of Pi's thread a message).
	 */
	readonly holdWhile?: () => boolean;
	/** How long a long read works before the event loop turns (`TimeSlice`; tests pass 0). */
	readonly sliceMs?: number;
}

/**
 * Follows a live session file and emits the history events of what is appended.
 *
 * Pi appends one JSON line per `appendFileSync`, so the file grows at its end and a reader can
 * see half a line: new bytes are read from the last offset and fed to the live pipeline, which
 * holds an unterminated line until its newline arrives. A file that shrank, was replaced (other
 * inode) or whose first bytes changed was rewritten (Pi's migration, or a fork): it is read again
 * from the start through a fresh pipeline. A file that does not exist yet (Pi writes it only with
 * the first answer) is simply waited for.
 *
 * Unsubscribing closes the watcher: nothing is left running.
 */
export function tailSessionFile(path: string, options: TailOptions = {}): Observable<HistoryEvent[]> {
	return new Observable<HistoryEvent[]>((subscriber) => {
		let offset = 0;
		let identity: { ino: bigint; head: Buffer } | undefined;
		let input: Subject<Uint8Array> | undefined;
		let pipeline: Subscription | undefined;
		let closed = false;
		let pending: Promise<void> = Promise.resolve();
		let chunk: Buffer | undefined;
		/** A read is feeding its chunks and more are coming: the pipeline waits to derive. */
		let feeding = false;

		const restart = () => {
			pipeline?.unsubscribe();
			input = new Subject<Uint8Array>();
			const fallback = options.fallbackSessionId ? { fallbackSessionId: options.fallbackSessionId } : {};
			pipeline = input
				.pipe(sessionPipeline({ mode: "live", ...fallback, holdDerive: () => feeding }))
				.subscribe({ next: (events) => subscriber.next(events), error: (err) => subscriber.error(err) });
			offset = 0;
			identity = undefined;
		};

		// Synchronous, like the ingest's reads: through the thread pool a read (even a `stat` finding
		// no file) queued behind chokidar's scan of a large session folder, and a query waiting for
		// the tail waited for that scan.
		const readNew = async (): Promise<Stats | undefined> => {
			let fd: number | undefined;
			try {
				const info = statSync(path, { bigint: true, throwIfNoEntry: false });
				if (!info || closed) return undefined;
				// A FIFO named like a session (a cloned repository can carry one) would hold a blocking
				// open until a writer came, and the whole process with it: not followed.
				const opened = openSessionFile(path);
				if (!opened) throw new Error(`${path} is not a regular file: not followed`);
				fd = opened.fd;
				// The size read up to, and the fingerprint of what was read (the refresh's format), from
				// one plain stat of the open file (the inode stays exact from the first, as a bigint).
				const now = opened.stat;
				const size = now.size;
				const head = Buffer.alloc(Math.min(HEAD_BYTES, size));
				readSync(fd, head, 0, head.length, 0);
				const known = identity;
				const common = known ? Math.min(known.head.length, head.length) : 0;
				const rewritten = known !== undefined && (info.ino !== known.ino || size < offset || !head.subarray(0, common).equals(known.head.subarray(0, common)));
				if (rewritten || !input) restart();
				// Keep the longest head seen: a tiny file's head grows with it.
				identity = { ino: info.ino, head: identity && identity.head.length > head.length ? identity.head : head };
				const slice = new TimeSlice(options.sliceMs);
				while (offset < size && !closed) {
					chunk ??= Buffer.allocUnsafe(CHUNK_BYTES);
					const got = readSync(fd, chunk, 0, Math.min(chunk.length, size - offset), offset);
					if (got === 0) break; // cut short meanwhile: the next read sees how
					offset += got;
					feeding = offset < size;
					input?.next(chunk.subarray(0, got));
					if (feeding) await slice.pause();
				}
				return offset === size && !closed ? now : undefined;
			} catch (err) {
				options.onError?.(err as Error);
				return undefined;
			} finally {
				if (fd !== undefined) closeSync(fd);
				// Whatever was fed is derived, even when the read stopped before its last chunk.
				if (feeding) {
					feeding = false;
					input?.next(NOTHING);
				}
			}
		};
		// Reads never overlap: each change waits for the read before it.
		const schedule = (): Promise<Stats | undefined> => {
			const read = pending.then(readNew);
			pending = read.then(() => undefined);
			return read;
		};
		options.readNow?.(schedule);

		// Watch the folder, not the file: the file may not exist yet, and chokidar only reports the
		// creation of a path it watches from its parent.
		const folder = dirname(path);
		let watcher: FSWatcher | undefined;
		// chokidar drops a 'change' that follows another within 50 ms, with no trailing event: a
		// quick second append would wait for the next write. One more read after the window closes
		// catches it.
		let settle: NodeJS.Timeout | undefined;
		const onPath = (changed: string) => {
			if (changed !== path || options.holdWhile?.()) return;
			void schedule();
			clearTimeout(settle);
			settle = setTimeout(() => {
				if (!options.holdWhile?.()) void schedule();
			}, SETTLE_MS);
		};
		const startWatching = () => {
			if (closed) return;
			watcher = watch(folder, {
				ignoreInitial: true,
				persistent: true,
				depth: 0,
				ignored: (candidate: string) => candidate !== folder && candidate !== path,
			});
			// Whatever happened before the watcher was ready is caught by one more read.
			watcher.on("ready", () => void schedule());
			watcher.on("add", onPath);
			watcher.on("change", onPath);
			watcher.on("error", (err) => options.onError?.(err as Error));
		};
		if (options.watchFrom) void options.watchFrom.then(startWatching, startWatching);
		else startWatching();
		void schedule();

		return () => {
			closed = true;
			clearTimeout(settle);
			void watcher?.close();
			pipeline?.unsubscribe();
		};
	});
}
