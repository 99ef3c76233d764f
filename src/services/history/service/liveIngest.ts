import type { Observable, Subscription } from "rxjs";
import type { HistoryEvent } from "../model/events.ts";

/** What live ingest needs of the service: applying a batch of events (the write it starts is the promise). */
export interface LiveTarget {
	applyEvents(events: readonly HistoryEvent[]): Promise<void>;
}

export interface LiveIngestOptions {
	/** A batch's update (or its archive write) failed: the tail goes on; the next batch tries again. */
	readonly onUpdateError: (error: Error) => void;
	/** A followed tail ended with an error (it is not restarted). */
	readonly onTailError: (error: Error) => void;
}

/**
 * Live ingest, as Pi's runtime and `pbot-history watch` both do it: every batch of events a tail
 * of a session file emits is applied to the service at once (searchable before its archive write
 * lands), and the writes in flight are kept so that stopping can wait for them. A failed update
 * is reported and does not stop the tail.
 */
export class LiveIngest {
	private readonly writes = new Set<Promise<void>>();

	constructor(
		private readonly target: LiveTarget,
		private readonly options: LiveIngestOptions,
	) {}

	/** Follows one tail; `seen` is told each batch after it is applied (for a watcher's display). */
	follow(tail: Observable<readonly HistoryEvent[]>, seen?: (events: readonly HistoryEvent[]) => void): Subscription {
		return tail.subscribe({
			next: (events) => {
				const write: Promise<void> = this.target
					.applyEvents(events)
					.catch((err: Error) => this.options.onUpdateError(err))
					.finally(() => this.writes.delete(write));
				this.writes.add(write);
				seen?.(events);
			},
			error: (err: Error) => this.options.onTailError(err),
		});
	}

	/** Resolves when the updates applied so far have been written (or have failed and been reported). */
	async settled(): Promise<void> {
		await Promise.all([...this.writes]);
	}

	/** Updates whose writes are still in flight (a test looks). */
	get inFlight(): number {
		return this.writes.size;
	}
}
