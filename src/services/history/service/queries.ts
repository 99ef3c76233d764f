import type { SessionArchive } from "../projections/archive.ts";
import type { QueryView } from "../projections/queryView.ts";
import { needsTextCheck, ScanCollector, type ScanHit } from "../projections/text/scanTexts.ts";
import { type SessionText, SessionTextError } from "../projections/text/sessionText.ts";
import { type DocMeta, parseDocMeta, readOriginal } from "../projections/text/sessionTextFormat.ts";
import { shownHit } from "../projections/text/shownHit.ts";
import type { TextProjection } from "../projections/text/textProjection.ts";
import {
	foldText,
	groupHits,
	listSessionFacts,
	pageInfo,
	parseNodeIdSyntax,
	parseSearch,
	type ReadParams,
	type ReadResult,
	readNode,
	type SearchHit,
	type SearchParams,
	type SearchResult,
	type SessionListFacts,
	type SessionListResult,
	type SessionsParams,
	unknownNode,
} from "../query/index.ts";
import { unknownId } from "../query/errors.ts";
import type { ArchiveCache } from "./archiveCache.ts";
import type { ArchiveStore } from "./ports.ts";

/** How a search is run, beyond its parameters (not the tool's: the caller's own). */
export interface SearchOptions {
	/** Leave out this session's Q&A in progress (the question being answered now, inside Pi). */
	readonly inProgressOf?: string;
}

export type SearchAnswer = (SearchResult & { readonly leftOut?: number }) | SessionListResult;

/** What the queries need from the service. */
export interface QueryPorts {
	readonly store: ArchiveStore;
	readonly projection: TextProjection;
	readonly archives: ArchiveCache;
	/** The refresh every query makes first (answers are fresh). */
	refresh(): Promise<void>;
	/** A problem for `takeWarnings`. */
	warn(message: string): void;
	/** An archive could not be read (one moved aside is extracted again). */
	unreadable(sessionId: string, err: Error): void;
}

/**
 * The service's read side: the session list, search and read. They answer from the text
 * projection (a search reads no archive; `read` reads only its node's session's archive), each
 * after a refresh. The service runs them again once when one moved a damaged archive aside.
 */
export class HistoryQueries {
	constructor(private readonly ports: QueryPorts) {}

	async sessions(params: SessionsParams): Promise<SessionListResult> {
		await this.ports.refresh();
		await this.ports.projection.catchUp();
		return this.listSessions(params);
	}

	private listSessions(params: SessionsParams): SessionListResult {
		const projection = this.ports.projection;
		const facts = Array.from(projection.sessions(), (head): [string, SessionListFacts] => {
			const session = head.header.session;
			// Its Q&A are not read (0 here): the listing says why, not "(no questions yet)".
			if (session.newerVersion === undefined) return [head.sessionId, session];
			const title = session.named ? session.title : "(its questions are not read)";
			return [head.sessionId, { ...session, title: `${title} — written by a newer pbot: update pbot-history to read it` }];
		});
		return listSessionFacts(facts, (id) => projection.get(id) !== undefined, params);
	}

	/**
	 * A scan of the text projection, then each shown hit's meta and original text (its snippet)
	 * from its projection file. An empty query lists the sessions.
	 */
	async search(params: SearchParams, options: SearchOptions, repaired = false): Promise<SearchAnswer> {
		const projection = this.ports.projection;
		await this.ports.refresh();
		// A session filter names a session the projection must know: caught up first (cheap, heads only).
		const filtering = params.sessionId !== undefined && params.sessionId !== null && params.sessionId !== "";
		if (filtering) await projection.catchUp();
		const parsed = parseSearch(params, filtering ? (id) => projection.get(id) !== undefined : () => true);
		if (parsed.query === "") {
			if (!filtering) await projection.catchUp();
			return this.listSessions(params);
		}
		const { needle, sessionId, window, page } = parsed;
		// Byte matches of a needle with a lone surrogate are candidates, each checked against the
		// original text: every one is kept. Else only what may rank within the page is.
		const checked = needsTextCheck(needle);
		const filter = {
			...(sessionId !== undefined ? { sessionId } : {}),
			window,
			...(options.inProgressOf !== undefined ? { inProgressOf: options.inProgressOf } : {}),
		};
		const collector = new ScanCollector(needle, filter, checked ? undefined : page.offset + page.limit);
		/** Sessions whose shown hits the projection could not back (see `shown`). */
		const damaged = new Set<string>();
		// The shown hits are read in the scan's turn: no projection update lands in between.
		const answer = await projection.scan(
			(text, head) => collector.add(text, head),
			sessionId,
			async () => {
				if (checked) {
					// Kept when the original text confirms them.
					const confirmed = new Set<ScanHit>();
					for (const hit of collector.candidates)
						if (foldText((await this.originalOf(hit.head, hit.originalRange)) ?? "").folded.includes(needle)) confirmed.add(hit);
					collector.retain((hit) => confirmed.has(hit));
				}
				const { ranked, total } = collector.finish(page.offset + page.limit);
				const shown: { level: number; hit: SearchHit }[] = [];
				for (const h of ranked.slice(page.offset, page.offset + page.limit)) {
					const hit = await this.shown(h, needle, checked, damaged);
					if (hit) shown.push({ level: h.level, hit });
				}
				const leftOut = collector.leftOut > 0 ? { leftOut: collector.leftOut } : {};
				return { kind: "hits" as const, query: parsed.query, groups: groupHits(shown), ...pageInfo(total, page), ...leftOut };
			},
			collector.streamNeedle,
			// A session without a hit, found before anything was made for it: noted for the fork chains, as `add` notes it.
			(head) => void collector.note(head.sessionId, head.parentSessionId),
		);
		// Made again from their archives, and the search run once more: a hit counted and not shown
		// would leave a page short ("1 hit; none from --offset 0").
		if (damaged.size === 0 || repaired) return answer;
		await projection.repair([...damaged]);
		return this.search(params, options, true);
	}

	/** A ranked hit as shown: its meta and snippet read from its file; `undefined` when the file changed since the scan. */
	private async shown(h: ScanHit, needle: string, checked: boolean, damaged: Set<string>): Promise<SearchHit | undefined> {
		try {
			return await this.shownChecked(h, needle, checked, damaged);
		} catch (err) {
			// A covered row that points outside its section (`SessionText.originalRange`).
			if (!(err instanceof SessionTextError)) throw err;
			damaged.add(h.head.sessionId);
			return undefined;
		}
	}

	private async shownChecked(h: ScanHit, needle: string, checked: boolean, damaged: Set<string>): Promise<SearchHit | undefined> {
		const original = await this.originalOf(h.head, h.originalRange);
		const metaBytes = await this.ports.projection.slice(h.head, h.metaRange);
		// Gone or changed since the scan (another process rewrote the file meanwhile): not shown.
		if (original === undefined || metaBytes === undefined) return undefined;
		// The bytes are those of the revision scanned (`slice` checks): meta that is not JSON, or an
		// original without the match the scan found (`shownHit`; a needle the scan does not check
		// aside), is a damaged file.
		let meta: DocMeta;
		try {
			meta = parseDocMeta(metaBytes);
		} catch {
			damaged.add(h.head.sessionId);
			return undefined;
		}

		let verified = h.verified;
		if (checked && h.level > 0) {
			verified = false;
			// (Only such a needle's candidates are checked, and their heads hold their rows.)
			for (const row of meta.coveredRows)
				if (foldText((await this.originalOf(h.head, h.head.originalRange(row))) ?? "").folded.includes(needle)) verified = true;
		}
		const hit = shownHit(h, original, meta, needle, verified);
		if (hit === undefined && !checked) damaged.add(h.head.sessionId);
		return hit;
	}

	/** A document's original text (at `range` of its projection file), read from the file. */
	private async originalOf(head: SessionText, range: [number, number]): Promise<string | undefined> {
		const bytes = await this.ports.projection.slice(head, range);
		return bytes && readOriginal(bytes);
	}

	/** Every archived Q&A by id, with its end time and whether it is completed, from the projection's rows. */
	async archivedQa(): Promise<Map<string, { readonly endMs: number; readonly completed: boolean }>> {
		const projection = this.ports.projection;
		await projection.catchUp();
		const out = new Map<string, { endMs: number; completed: boolean }>();
		for (const head of await projection.withRows()) {
			for (let row = 0; row < head.docs; row++) if (head.level(row) === 0) out.set(head.id(row), { endMs: head.endMs(row), completed: head.completed(row) });
		}
		return out;
	}

	/** A node and its neighbourhood, from the archive of the node's session only. */
	async read(params: ReadParams): Promise<ReadResult> {
		const projection = this.ports.projection;
		await this.ports.refresh();
		const id = parseNodeIdSyntax(params?.id);
		// First the sessions the heads file names: the node's archive is read (fresh) either way,
		// so no catch-up of every other session is needed when one of them has it.
		for (const candidate of await projection.nodeCandidates(id)) {
			const found = await this.archiveOf(candidate);
			if (found?.view.nodes.has(id)) return readNode(found.view, params);
		}
		await projection.catchUp();
		const sessionId = await projection.sessionOfNode(id);
		const found = sessionId !== undefined ? await this.archiveOf(sessionId) : undefined;
		if (!found) throw this.unknownHere(id);
		return readNode(found.view, params);
	}

	/**
	 * The error for an id no session here has: saying so when archives written by a newer pbot are
	 * here (their Q&A are not read, so the id may be one of theirs; "unknown node" alone misled).
	 */
	private unknownHere(id: string): Error {
		const newer = [...this.ports.projection.sessions()].filter((t) => t.header.session.newerVersion !== undefined);
		if (newer.length === 0) return unknownNode(id);
		return unknownId(
			"id",
			`unknown node ${JSON.stringify(id)} (${newer.length} session(s) here were written by a newer pbot and are not read: update pbot-history to read them)`,
		);
	}

	/**
	 * A session's archive for a query, read at most once per revision (a few kept). When what is
	 * read is newer than the projection (another process wrote it since the catch-up), the
	 * projection is made again from it, so the two agree.
	 */
	private async archiveOf(sessionId: string): Promise<{ archive: SessionArchive; view: QueryView } | undefined> {
		const { store, projection, archives } = this.ports;
		const revision = projection.get(sessionId)?.revision;
		const cached = archives.get(sessionId, revision);
		if (cached) return cached;
		let read: { archive: SessionArchive; revision: string } | undefined;
		try {
			if (store.readWithRevision) read = await store.readWithRevision(sessionId);
			else {
				const archive = await store.read(sessionId);
				read = archive && revision !== undefined ? { archive, revision } : undefined;
			}
		} catch (err) {
			this.ports.warn(`archive ${sessionId}: ${(err as Error).message}`);
			this.ports.unreadable(sessionId, err as Error);
			return undefined;
		}
		if (!read) return undefined;
		if (read.revision !== revision) await projection.refresh(read.archive, read.revision);
		return archives.put(sessionId, read.revision, read.archive);
	}
}
