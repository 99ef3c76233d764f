import type { IngestReport } from "./ingestRun.ts";

/**
 * Damaged archives found while answering: a stored archive that does not parse is moved aside (by
 * the store) and its session extracted again from its native file, as if never ingested. This
 * keeps which sessions were moved aside since the last repair, and runs a query or an ingest
 * again once when there were any.
 */
export class Repairs {
	private readonly quarantined = new Set<string>();

	/**
	 * `forget`: make the service treat the session as never ingested (not stored, its files unread).
	 * `stored`: whether the session has an archive again after the repair (its session file found and
	 * read); `warn`: where it is said when it has not.
	 */
	constructor(
		private readonly forget: (sessionId: string) => void,
		private readonly stored: (sessionId: string) => Promise<boolean>,
		private readonly warn: (message: string) => void,
	) {}

	/** An archive that could not be read; only one the store moved aside (damaged) needs a repair. */
	note(sessionId: string, err: Error): void {
		if ((err as { quarantined?: unknown }).quarantined === undefined) return;
		this.forget(sessionId);
		this.quarantined.add(sessionId);
	}

	/**
	 * A query, run again once when it moved a damaged archive aside: the query's refresh then
	 * extracts that session again from its native file, so the answer includes it.
	 */
	async repaired<T>(query: () => Promise<T>): Promise<T> {
		let result: T;
		try {
			result = await query();
		} catch (err) {
			if (this.quarantined.size === 0) throw err;
			result = undefined as T;
		}
		if (this.quarantined.size === 0) return result;
		const ids = this.taken();
		const again = await query();
		for (const message of await this.lost(ids)) this.warn(message);
		return again;
	}

	/**
	 * An ingest's report after its archives were checked (`problems`: what the check said): when the
	 * check moved archives aside, their sessions are ingested again (`again`) and the reports joined.
	 */
	async afterCheck(report: IngestReport, problems: readonly string[], again: () => Promise<IngestReport>): Promise<IngestReport> {
		if (this.quarantined.size === 0) return { ...report, warnings: [...report.warnings, ...problems] };
		const ids = this.taken();
		const redo = await again();
		const lost = await this.lost(ids);
		const redone = new Set(redo.sessions.map((s) => s.sessionId));
		return {
			sessions: [...report.sessions.filter((s) => !redone.has(s.sessionId)), ...redo.sessions],
			unchangedFiles: redo.unchangedFiles,
			warnings: [...report.warnings, ...problems, ...redo.warnings, ...lost],
			// The run again looked at every file: what it left unread (it shares the first run's signal) is what is left.
			...(redo.stopped !== undefined ? { stopped: redo.stopped } : {}),
		};
	}

	/** The sessions moved aside since the last repair, now being repaired. */
	private taken(): string[] {
		const ids = [...this.quarantined];
		this.quarantined.clear();
		return ids;
	}

	/**
	 * What to say of the sessions whose archive was moved aside and that the repair could not
	 * extract again (no session file of theirs here: a workspace copied without Pi's files): they are
	 * not left to vanish silently.
	 */
	private async lost(ids: readonly string[]): Promise<string[]> {
		const out: string[] = [];
		for (const id of ids)
			if (!(await this.stored(id)))
				out.push(
					`session ${id}: no session file of it was found to extract it again, so its Q&A are left out until the file is back (any query or ingest then reads it) or its archive is restored from the .damaged-… copy in .pi/pbot/history`,
				);
		return out;
	}
}
