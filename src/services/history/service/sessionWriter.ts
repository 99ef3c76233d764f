import type { SessionArchive } from "../projections/archive.ts";

/**
 * How a write is made durable: at once (a folder sync after the rename: a live update or a summary,
 * whose archive is the only copy of what it adds), or later, by `syncDeferred` (an ingest's writes
 * share one folder sync at its end: re-reading the native files redoes what a power cut loses).
 */
export type Durability = "durable" | "deferred";

/** What the writer needs from the service that holds the archives. */
export interface SessionWriterPorts {
	/** The archive of a session as it stands now: a write takes the latest when its turn comes. */
	current(sessionId: string): SessionArchive | undefined;
	/**
	 * Called as a write starts: whether the holder lets this archive go now (it then lives only in
	 * the write, and the writer forgets it too: see `HeldArchives.releaseWritten`).
	 */
	letGo(sessionId: string, archive: SessionArchive): boolean;
	/** Stores the archive (the archive store, and what the service keeps beside it); `kept`: not let go. */
	store(sessionId: string, archive: SessionArchive, durability: Durability, kept: boolean): Promise<void>;
	/** Makes every deferred write durable (a folder sync). */
	sync(): Promise<void>;
}

/**
 * Writes each session's archive, one write per session at a time, sessions concurrently. A write
 * asked for is queued behind the session's write in flight and takes the archive as it stands when
 * its turn comes, so a write asked for earlier can never land after a later one and put back an
 * older branch set; an archive already written is not written again.
 *
 * A plain promise chain per session, not an RxJS `concatMap` per session: every caller needs the
 * completion of its own write (an ingest checkpoints a file only once its archive landed, a live
 * update resolves then), which a promise gives directly, and a chain that is done is simply
 * dropped; a subject per session would need a completion handle per request and a teardown.
 */
export class SessionWriter {
	/** The last write of each session in flight. */
	private readonly chains = new Map<string, Promise<void>>();
	/** The archive object last written, per session (not written again while it is current). */
	private readonly lastWritten = new Map<string, SessionArchive>();
	/** Sessions whose last write was not made durable yet. */
	private readonly deferred = new Set<string>();

	constructor(private readonly ports: SessionWriterPorts) {}

	/** Queues a write of the session's archive as it will stand then; resolves when it landed (or was not needed). */
	write(sessionId: string, durability: Durability = "durable"): Promise<void> {
		const previous = this.chains.get(sessionId) ?? Promise.resolve();
		// A failed write does not stop the next one: it writes the latest archive anyway.
		const next = previous.catch(() => undefined).then(() => this.writeNow(sessionId, durability));
		this.chains.set(sessionId, next);
		const forget = () => {
			if (this.chains.get(sessionId) === next) this.chains.delete(sessionId);
		};
		next.then(forget, forget);
		return next;
	}

	/** Sessions with a write queued or in flight. */
	get busy(): number {
		return this.chains.size;
	}

	/** Makes the deferred writes durable, if there are any (one folder sync); they count as durable from then on. */
	async syncDeferred(): Promise<void> {
		if (this.deferred.size === 0) return;
		this.deferred.clear();
		await this.ports.sync();
	}

	private async writeNow(sessionId: string, durability: Durability): Promise<void> {
		const current = this.ports.current(sessionId);
		if (!current || this.lastWritten.get(sessionId) === current) {
			// Written already, maybe by an ingest that defers durability: make it durable now.
			if (durability === "durable" && this.deferred.delete(sessionId)) await this.ports.sync();
			return;
		}
		if (durability === "deferred") this.deferred.add(sessionId);
		else this.deferred.delete(sessionId);
		const letGo = this.ports.letGo(sessionId, current);
		if (letGo) this.lastWritten.delete(sessionId);
		await this.ports.store(sessionId, current, durability, !letGo);
		if (!letGo) this.lastWritten.set(sessionId, current);
	}
}
