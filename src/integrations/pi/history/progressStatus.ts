import { hostname } from "node:os";
import type { LeaseHolder } from "../../../services/history/service/ports.ts";
/** Work of fewer items than this shows no progress. */
const PROGRESS_MIN = 5;
/** Progress is shown at most this often. */
const PROGRESS_EVERY_MS = 100;

/**
 * Progress of an ingest or a projection rebuild in Pi's footer: from 0 of N, at most every
 * `PROGRESS_EVERY_MS`, cleared at N of N. Work of fewer than `PROGRESS_MIN` items (the file of
 * the turn that just ended) is not shown: it would only flicker.
 */
export class ProgressStatus {
	/** Where progress is shown (Pi's footer), set at each session start; nowhere without a UI. */
	private status: ((text: string | undefined) => void) | undefined;
	/** When progress was last shown. */
	private shownAt = 0;

	/** Shows progress here from now on (`undefined`: nowhere). */
	showIn(status: ((text: string | undefined) => void) | undefined): void {
		this.status = status;
	}

	show(work: "sessions" | "search text", done: number, total: number): void {
		const status = this.status;
		if (!status || total < PROGRESS_MIN) return;
		const now = Date.now();
		if (done > 0 && done < total && now - this.shownAt < PROGRESS_EVERY_MS) return;
		this.shownAt = now;
		try {
			status(done >= total ? undefined : `pbot: ${work === "sessions" ? "reading sessions" : "making search text"} ${done}/${total}`);
		} catch {
			// a stale Pi context after a switch: the status no longer matters
		}
	}

	/** Shows that an ingest waits for another process's (`undefined`: the wait is over; progress follows). */
	waiting(holder: LeaseHolder | undefined): void {
		const status = this.status;
		if (!status) return;
		try {
			status(holder ? `pbot: ${waitingText(holder)}` : undefined);
		} catch {
			// a stale Pi context after a switch: the status no longer matters
		}
	}
}

/**
 * What an ingest waiting for the workspace's ingest lease says (Pi's footer, the CLI's stderr):
 * who holds it, so a person can tell a stuck process from a busy one.
 */
export function waitingText(holder: LeaseHolder): string {
	const since = holder.since ? `, since ${holder.since.slice(11, 19)} UTC` : "";
	const where = holder.host === hostname() ? "" : ` on ${holder.host}`;
	return `waiting for another pbot process (pid ${holder.pid}${where}${since}) that is reading this workspace's sessions`;
}
