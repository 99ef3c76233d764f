import type { SessionArchive } from "../archive.ts";
import type { ArchiveStore, TextStore } from "../ports.ts";
import { finishSessionText, projectSessionText, SessionText, SessionTextError, type SessionTextBody } from "./sessionText.ts";

/** Bytes read first for a projection's head (header, table, ids): enough for most sessions at once. */
const HEAD_READ = 8 * 1024;

export interface TextProjectionOptions {
	readonly archives: ArchiveStore;
	readonly texts: TextStore;
	/**
	 * Keep every session's whole text in memory once read (Pi: later searches scan memory).
	 * Without it only the heads are kept, and each search streams the files (a CLI process: its
	 * memory stays flat, whatever the history's size).
	 */
	readonly keepText: boolean;
	/** Problems for a person: a projection rebuilt because it was missing or damaged, an archive that could not be read. */
	readonly warn: (message: string) => void;
}

/**
 * The text projection of a workspace: per session, its searchable text and facts (`SessionText`),
 * derived from the archive and checked against the archive's revision. It catches up at every
 * query (another process wrote archives, the workspace was copied, a projection file was deleted,
 * cut short or damaged: each is rebuilt from its archive) and is brought up to date right after
 * each archive write of this process (`put`). Catch-ups and updates take turns, so a query that
 * waits for a catch-up sees every session.
 */
export class TextProjection {
	/** Per session: its projection as last read or made (whole with `keepText`, else its head). */
	private readonly entries = new Map<string, SessionText>();
	private turn: Promise<unknown> = Promise.resolve();
	/** Revisions for stores that cannot tell them: this process's writes, counted. */
	private localRevision = 0;

	constructor(private readonly options: TextProjectionOptions) {}

	/**
	 * Brings every session's projection in line with its archive, and hands each whole projection
	 * to `visit` (a search), reading from disk what is not held; with `only`, just that session's.
	 * Sessions come in id order.
	 */
	catchUp(visit?: (text: SessionText) => void, only?: string): Promise<void> {
		return this.inTurn(() => this.catchUpNow(visit, only));
	}

	/** The sessions' projections as of the last catch-up (heads at least). */
	sessions(): IterableIterator<SessionText> {
		return this.entries.values();
	}

	get(sessionId: string): SessionText | undefined {
		return this.entries.get(sessionId);
	}

	/** The session holding a node id (a session root, Q&A or summary), as of the last catch-up. */
	sessionOfNode(id: string): string | undefined {
		if (this.entries.has(id)) return id;
		for (const text of this.entries.values()) if (text.findId(id) >= 0) return text.sessionId;
		return undefined;
	}

	/**
	 * After an archive write: the session's projection, from the archive as stored (or a body
	 * made from it before the write) and the revision the write reports.
	 */
	put(source: SessionArchive | SessionTextBody, revision: string | undefined): Promise<void> {
		const body = "table" in source ? source : projectSessionText(source);
		return this.inTurn(() => this.store(body, revision ?? this.nextLocalRevision()));
	}

	/**
	 * After reading an archive whose revision is not the projection's (it changed since the last
	 * catch-up): the projection made again from what was read.
	 */
	refresh(archive: SessionArchive, revision: string): Promise<void> {
		if (this.entries.get(archive.session.sessionId)?.revision === revision) return Promise.resolve();
		return this.put(archive, revision);
	}

	private nextLocalRevision(): string {
		return `local-${++this.localRevision}`;
	}

	private inTurn<T>(work: () => Promise<T>): Promise<T> {
		const run = this.turn.then(work);
		this.turn = run.catch(() => undefined);
		return run;
	}

	private async store(body: SessionTextBody, revision: string): Promise<void> {
		const bytes = finishSessionText(body, revision);
		try {
			await this.options.texts.write(body.sessionId, bytes);
		} catch (err) {
			// The archive is written; only its search text is not. The next catch-up makes it again.
			this.options.warn(`search text of session ${body.sessionId}: ${(err as Error).message}`);
		}
		if (this.options.keepText || this.entries.has(body.sessionId)) this.hold(SessionText.parse(bytes, body.sessionId, "whole"));
	}

	private hold(text: SessionText): void {
		// Without `keepText`, only the head is kept (a copy: the whole file's bytes can go).
		this.entries.set(text.sessionId, this.options.keepText || !text.hasText ? text : SessionText.parse(Buffer.from(text.bytes.subarray(0, text.headBytes())), text.sessionId, "head"));
	}

	private async catchUpNow(visit: ((text: SessionText) => void) | undefined, only: string | undefined): Promise<void> {
		const { archives, texts } = this.options;
		const revisions = archives.revisions ? await archives.revisions() : undefined;
		const ids = revisions ? [...revisions.keys()].sort() : await archives.list();
		const live = new Set(ids);
		for (const id of [...this.entries.keys()]) if (!live.has(id)) this.entries.delete(id);
		const rebuilt = { missing: 0, damaged: 0, behind: 0, failed: 0 };
		for (const id of ids) {
			const visited = visit !== undefined && (only === undefined || only === id);
			const wholeNeeded = visited || this.options.keepText;
			const revision = revisions?.get(id);
			const held = this.entries.get(id);
			const current = held !== undefined && (revision === undefined || held.revision === revision);
			let text: SessionText | undefined = current && (held.hasText || !wholeNeeded) ? held : undefined;
			if (!text) {
				const read = await this.readStored(id, wholeNeeded);
				if (read instanceof SessionText && (revision === undefined || read.revision === revision)) text = read;
				else {
					if (read === undefined) rebuilt.missing++;
					else if (read instanceof SessionText) rebuilt.behind++;
					else rebuilt.damaged++;
					text = await this.rebuild(id);
					if (!text) {
						rebuilt.failed++;
						continue;
					}
				}
				this.hold(text);
			}
			if (visited) visit(text);
		}
		await this.removeOrphans(live);
		// A projection behind its archive is what another process's write leaves: caught up silently.
		const problems = [rebuilt.missing > 0 ? `${rebuilt.missing} missing` : "", rebuilt.damaged > 0 ? `${rebuilt.damaged} damaged` : ""].filter(Boolean);
		if (problems.length > 0) this.options.warn(`search text rebuilt from the archives (${problems.join(", ")})`);
	}

	/** A session's stored projection: read and parsed, `undefined` when there is none, or why it cannot be used. */
	private async readStored(id: string, whole: boolean): Promise<SessionText | undefined | SessionTextError> {
		let bytes: Buffer | undefined;
		try {
			bytes = await this.options.texts.read(id, whole ? undefined : HEAD_READ);
		} catch (err) {
			return new SessionTextError((err as Error).message);
		}
		if (bytes === undefined) return undefined;
		try {
			if (whole) return SessionText.parse(bytes, id, "whole");
			const header = SessionText.parse(bytes, id, "header");
			if (bytes.length === header.end) return header;
			if (bytes.length >= header.headBytes()) return SessionText.parse(bytes, id, "head");
			const more = await this.options.texts.read(id, header.headBytes());
			return more ? SessionText.parse(more, id, "head") : undefined;
		} catch (err) {
			if (err instanceof SessionTextError) return err;
			throw err;
		}
	}

	/** A session's projection made again from its archive, written, and returned (whole). */
	private async rebuild(id: string): Promise<SessionText | undefined> {
		const { archives } = this.options;
		let read: { archive: SessionArchive; revision: string } | undefined;
		try {
			if (archives.readWithRevision) read = await archives.readWithRevision(id);
			else {
				const archive = await archives.read(id);
				read = archive ? { archive, revision: this.nextLocalRevision() } : undefined;
			}
		} catch (err) {
			this.options.warn(`archive ${id}: ${(err as Error).message}; its session is left out of search`);
			return undefined;
		}
		if (!read) return undefined; // removed meanwhile
		const bytes = finishSessionText(projectSessionText(read.archive), read.revision);
		try {
			await this.options.texts.write(id, bytes);
		} catch (err) {
			this.options.warn(`search text of session ${id}: ${(err as Error).message}`);
		}
		return SessionText.parse(bytes, id, "whole");
	}

	/** Projection files whose archive is gone: derived from nothing, removed. */
	private async removeOrphans(live: ReadonlySet<string>): Promise<void> {
		let stored: string[];
		try {
			stored = await this.options.texts.list();
		} catch {
			return;
		}
		const orphans = stored.filter((id) => !live.has(id));
		if (orphans.length === 0) return;
		// An archive made since the listing (another process) keeps its projection.
		const now = new Set(await this.options.archives.list());
		for (const id of orphans) if (!now.has(id)) await this.options.texts.remove(id).catch(() => undefined);
	}
}
