import { emptySessionArchive, type SessionArchive } from "../archive.ts";
import type { ArchiveReadProblem, ArchiveStore, TextStore } from "../../service/ports.ts";
import { encodeHeadsFile } from "./headsFile.ts";
import { finishSessionText, projectSessionText, type SessionTextBody } from "./projectSessionText.ts";
import { projectArchiveTexts, WrittenTexts } from "./projectArchiveTexts.ts";
import { TextArena } from "../../model/textArena.ts";
import { SessionText, SessionTextError } from "./sessionText.ts";
import { KeptBodies } from "./keptBodies.ts";
import { Slab } from "./slab.ts";
import { type LazyPack, NOT_FOUND, StoredTexts } from "./storedTexts.ts";
import { TimeSlice } from "../../service/timeSlice.ts";
import { type FileRead, PACK_AFTER, ProjectionPacks } from "./projectionPacks.ts";
import type { TextPack } from "./textPack.ts";

/** Projection writes a catch-up keeps in flight while it rebuilds the next. */
const MAX_PENDING_WRITES = 16;
/** Sessions the heads file may have wrong before a query's catch-up writes it again (see `headsFileBehind`). */
const HEADS_AFTER = 32;

/** How a catch-up goes (`catchUpNow`). */
interface CatchUpHow {
	/** Every archive's own `stat`, not the folder's cache (an ingest's check). */
	readonly fresh?: boolean;
	/** A session known by its header line only is searched for this as its file is read. */
	readonly needle?: Uint8Array;
	/**
	 * Told of a session so searched whose text does not hold the needle, instead of `visit` (which
	 * would be handed a head made for it, with no rows matching), when no head is kept from it:
	 * in a new process's first search, most sessions cost a read and a search, and nothing else.
	 */
	readonly missed?: (head: SessionText) => void;
	/** An ingest's or Pi's warm-up: the pack follows, and files without an archive and a behind heads file are seen to. */
	readonly packing?: boolean;
	/**
	 * A search: sessions are visited newest first (`scan`). Pi's session ids are UUIDv7, so id
	 * order is the order sessions began in; a search ranks the newest hits first, and met oldest
	 * first nearly every hit of a common word entered the page kept so far and was pushed out
	 * again (20k hits made and dropped for "error" on the bench's 1 GB history). Met newest first,
	 * the page fills early and the rest are only counted. The answer does not depend on the order.
	 */
	readonly newestFirst?: boolean;
}

export interface TextProjectionOptions {
	readonly archives: ArchiveStore;
	readonly texts: TextStore;
	/** Problems for a person: a projection rebuilt because it was missing or damaged, an archive that could not be read. */
	readonly warn: (message: string) => void;
	/** An archive could not be read for its projection (after `warn`): the service may extract it again. */
	readonly unreadable?: (sessionId: string, error: Error) => void;
	/** Told how far a catch-up that makes projection files again is (sessions looked at of all), once it makes one. */
	readonly progress?: (done: number, total: number) => void;
	/** How long a catch-up works before the event loop may turn (`TimeSlice`; 0: between every two sessions). */
	readonly sliceMs?: number;
	/** Sessions the pack may not hold before a catch-up asked to pack makes a new one (default 64; tests: fewer). */
	readonly packAfter?: number;
	/** Bytes of session text kept in memory between searches (`KeptBodies`; a resident process); default none. */
	readonly keepText?: number;
}

/**
 * The text projection of a workspace: per session, its searchable text, what its hits show and
 * its facts (`SessionText`), derived from the archive and checked against the archive's revision.
 * It catches up at every query (another process wrote archives, the workspace was copied, a
 * projection file was deleted, cut short or damaged: each is made again from its archive) and is
 * brought up to date right after each archive write of this process (`put`). Catch-ups and
 * updates take turns, so a query that waits for a catch-up sees every session.
 *
 * Only each session's head (header, rows, ids: a few dozen bytes per document) stays in memory. A
 * search streams the text from the files through one reused buffer: the page cache serves it at
 * memory speed, and neither a CLI call nor Pi holds the whole history's text.
 */
export class TextProjection {
	/** Per session: its projection's head as last read or made. */
	private readonly heads = new Map<string, SessionText>();
	private turn: Promise<unknown> = Promise.resolve();
	/** Lets the event loop turn between sessions, and between reading and projecting an archive (see `TimeSlice`). */
	private readonly timeSlice: TimeSlice;
	/**
	 * Sessions changed in memory (a live update) whose archive write has not landed yet: searched
	 * as they are in memory, whatever their files say, until `dropOverlay`.
	 */
	private readonly overlays = new Map<string, { readonly source: SessionArchive; readonly text: SessionText }>();
	/** Revisions for stores that cannot tell them: this process's writes, counted. */
	private localRevision = 0;
	/**
	 * Searches this process made. A process that searches again (Pi) keeps every head its searches
	 * read (≈ 90 bytes per document), so the next reads only meta and text; a one-shot search keeps
	 * none (its hits copy what they need out of the rows as they are found).
	 */
	private searches = 0;
	private readonly slab = new Slab();
	/**
	 * While an ingest makes a pack (`packingWhile`): sessions stored into it without copy keys, and
	 * the parents the sessions stored name. A first ingest meets a parent before its forks.
	 */
	private ingestPack: { readonly withoutKeys: Set<string>; readonly parents: Set<string> } | undefined;
	/** The projection files, read through one reused buffer. */
	private readonly stored: StoredTexts;
	/** The bodies kept between searches (`keepText`), if any. */
	private readonly kept: KeptBodies | undefined;
	/** The text folder's identity when this process last looked (`forgetIfFolderReplaced`). */
	private keptFolder: string | undefined;
	/**
	 * Sessions whose projection file this search found to be of the revision held (`slice`): a
	 * search may read sessions from the pack, and the file is then checked before a shown hit's
	 * bytes are taken from it.
	 */
	private readonly checkedFiles = new Set<string>();
	/** Sessions of this search whose slices come from the pack (they have no file of their own). */
	private readonly packedSlices = new Set<string>();
	/** Packing: behind the catch-ups, or by a catch-up that finds nothing (`projectionPacks.ts`). */
	private readonly packs: ProjectionPacks;
	/** Whether this process read the heads file (a catch-up does once; until then only sessions `read` looked at are held). */
	private headsFileRead = false;
	/** Each session's revision as the heads file holds it (loaded or saved): no new file while they agree. */
	private cachedRevisions = new Map<string, string>();
	/** Every projection was removed on purpose (`remakeAll`): the next full catch-up makes them again without a warning. */
	private remaking = false;
	/**
	 * While a catch-up makes every projection (a rebuild, a new projection version: `bulk`), where
	 * archives are read with their texts left as bytes (`madeFromBytes`); let go when it ends.
	 */
	private bulkTexts: { readonly arena: TextArena; readonly written: WrittenTexts } | undefined;
	/**
	 * Projections made that could not be stored (a full disk, a read-only or odd text folder): a
	 * search shows their hits from here (it had counted them and shown none: "10 hits; none from
	 * --offset 0"). This process only; the next makes them again.
	 */
	private readonly unstored = new Map<string, SessionText>();
	/** Why projections could not be stored since last said, and for how many sessions (said once per catch-up, not once per session). */
	private readonly storeFailures = new Map<string, number>();

	constructor(private readonly options: TextProjectionOptions) {
		this.kept = options.keepText ? new KeptBodies(options.keepText) : undefined;
		this.stored = new StoredTexts(options.texts, undefined, this.kept);
		this.timeSlice = new TimeSlice(options.sliceMs);
		this.packs = new ProjectionPacks({
			archives: options.archives,
			texts: options.texts,
			stored: this.stored,
			timeSlice: this.timeSlice,
			warn: options.warn,
			packAfter: options.packAfter ?? PACK_AFTER,
			heads: () => [...this.heads.values()],
		});
	}

	/**
	 * Brings every session's projection in line with its archive and, with `visit` (a search),
	 * hands it each session's projection read to the end of its text — in a buffer reused for the
	 * next session, so `visit` keeps nothing of it but the `head` it is given (held after the scan).
	 * With `only`, just that session is visited. Sessions come in id order.
	 */
	catchUp(
		visit?: (text: SessionText, head: SessionText) => void,
		only?: string,
		options: {
			readonly fresh?: boolean;
			/**
			 * Then packs the projection (`textPack.ts`) when the pack leaves many sessions out: an
			 * ingest's and Pi's warm-up do, so that searches after them read one file.
			 */
			readonly pack?: boolean;
		} = {},
	): Promise<void> {
		const caught = this.inTurn(() => this.catchUpNow(visit, only, { fresh: options.fresh === true, packing: options.pack === true }));
		return options.pack === true ? caught.then(() => this.packs.behind()) : caught;
	}

	/**
	 * A catch-up with `visit`, then `after` in the same turn: no update lands between the scan and
	 * what `after` reads of the files (a search's shown hits: their rows must still be the
	 * files'; in Pi the live tail writes the current session's projection often). With `needle`,
	 * a session known only by its header line is searched for it as its file is read, a chunk at a
	 * time: `visit` gets it with the rows found (`matching(needle)`) and its meta, not its text.
	 */
	scan<T>(
		visit: (text: SessionText, head: SessionText) => void,
		only: string | undefined,
		after: () => Promise<T>,
		needle?: Uint8Array,
		missed?: (head: SessionText) => void,
	): Promise<T> {
		return this.inTurn(async () => {
			this.checkedFiles.clear();
			this.packedSlices.clear();
			this.stored.releaseSlices();
			await this.catchUpNow(visit, only, needle ? { needle, newestFirst: true, ...(missed ? { missed } : {}) } : { newestFirst: true });
			this.searches++;
			return after();
		});
	}

	/**
	 * A process that keeps text searches what it keeps, not the files: were the text folder deleted
	 * (or made again) under it, it would not notice, and the files would stay missing for every
	 * other process. So each catch-up looks at the folder's identity (a `stat`); when it changed,
	 * what was kept and read is forgotten, and the catch-up reads the files as a new process does
	 * (making again, and saying, what is missing).
	 */
	private forgetIfFolderReplaced(): void {
		const now = this.options.texts.folderIdentity?.();
		if (this.keptFolder !== undefined && now !== this.keptFolder) this.forgetWhatWasRead();
		this.keptFolder = now;
	}

	/** Forgets what was read of the stored projections (heads, kept bodies, checks): the next catch-up reads them as a new process does. */
	private forgetWhatWasRead(): void {
		this.heads.clear();
		this.kept?.clear();
		this.headsFileRead = false;
		this.cachedRevisions.clear();
		this.checkedFiles.clear();
		this.packedSlices.clear();
	}

	/** Bytes of session text this process keeps in memory between searches (`keepText`). */
	get keptBytes(): number {
		return this.kept?.bytes ?? 0;
	}

	/**
	 * Reads every session's text into the kept bodies (`keepText`; a resident process's start), so
	 * that its first search reads no projection file either. Nothing without `keepText`.
	 */
	async keepAll(): Promise<void> {
		if (!this.kept) return;
		// The first pass holds each session's head with its rows; the second reads each body beside
		// its head (`StoredTexts.body`), which keeps it.
		await this.catchUp(() => {});
		await this.catchUp(() => {});
	}

	/** The sessions' heads as of the last catch-up. */
	sessions(): IterableIterator<SessionText> {
		return this.heads.values();
	}

	get(sessionId: string): SessionText | undefined {
		return this.heads.get(sessionId);
	}

	/** The session holding a node id (a session root, Q&A or summary), as of the last catch-up. */
	async sessionOfNode(id: string): Promise<string | undefined> {
		if (this.heads.has(id)) return id;
		for (const head of await this.withRows()) if (head.findId(id) >= 0) return head.sessionId;
		return undefined;
	}

	/**
	 * Sessions that may hold a node id, from the heads file alone (no catch-up, no projection
	 * file): those whose ids contain it as bytes. What `read` tries before a catch-up; the caller
	 * confirms a candidate against its archive (a stale heads file may name the wrong sessions or
	 * miss the right one).
	 */
	nodeCandidates(id: string): Promise<string[]> {
		return this.inTurn(async () => {
			if (this.heads.has(id)) return [id];
			const found = await this.stored.headsHolding(id);
			if (!found) return [];
			// Held as read (what the archive's revision is checked against); the other sessions' heads
			// are read at the next catch-up (`headsFileRead`).
			for (const head of found) if (!this.heads.has(head.sessionId)) this.heads.set(head.sessionId, head);
			return found.map((head) => head.sessionId);
		});
	}

	/**
	 * Every session's head with its table and ids (what finding a node or listing every Q&A
	 * needs), as of the last catch-up: a new process that listed sessions holds only their
	 * header lines, and reads the rest from the heads file (or a projection file) now.
	 */
	withRows(): Promise<SessionText[]> {
		return this.inTurn(async () => {
			await this.fillRows();
			return [...this.heads.values()];
		});
	}

	/** A session as it is in memory (`source`), searched instead of its file until `dropOverlay(source)`. */
	overlay(source: SessionArchive, body: SessionTextBody): void {
		this.overlays.set(body.sessionId, { source, text: SessionText.parse(finishSessionText(body, "in memory"), body.sessionId, "whole") });
	}

	/** The overlay of `source` is no longer needed (its write landed): the file is searched again. */
	dropOverlay(source: SessionArchive): void {
		const id = source.session.sessionId;
		if (this.overlays.get(id)?.source === source) this.overlays.delete(id);
	}

	/**
	 * `[start, end)` of a session's projection file (a row's meta or original text, from its
	 * head's ranges), or `undefined` when the file changed since its head was read (then the
	 * bytes would be another revision's). The head may be one no longer held (a fuller one of the
	 * same revision replaced it): the same revision means the same bytes.
	 *
	 * A search may have read the session from the pack, never opening its file: so the file's
	 * header line is checked (once per search) before its bytes are taken, and a file missing or
	 * damaged while its archive is still of the head's revision is made again from the archive.
	 */
	async slice(head: SessionText, [start, end]: [number, number]): Promise<Buffer | undefined> {
		if (head.bytes.length === head.end) return head.bytes.subarray(start, end); // whole in memory (an overlay)
		if (this.heads.get(head.sessionId)?.revision !== head.revision) return undefined;
		const kept = this.unstored.get(head.sessionId);
		if (kept?.revision === head.revision) return kept.bytes.subarray(start, end);
		const { texts } = this.options;
		if (this.packedSlices.has(head.sessionId)) return this.stored.sliceFromPack(head, start, end);
		if (!this.checkedFiles.has(head.sessionId)) {
			const line = head.bytes.subarray(0, head.headerBytes());
			const stored = await texts.read(head.sessionId, { length: line.length }).catch(() => null);
			if (stored?.equals(line)) this.checkedFiles.add(head.sessionId);
			else {
				// No file of its own (or another revision's): a packed session, read from the pack.
				const packed = await this.stored.sliceFromPack(head, start, end);
				if (packed) {
					this.packedSlices.add(head.sessionId);
					return packed;
				}
				return (await this.remade(head, stored === undefined ? "missing" : "damaged"))?.bytes.subarray(start, end);
			}
		}
		const bytes = await texts.read(head.sessionId, { offset: start, length: end - start }).catch(() => undefined);
		return bytes && bytes.length === end - start ? bytes : undefined;
	}

	/**
	 * A session's projection file made again from its archive, and returned when that is still of
	 * `head`'s revision (the file was missing or damaged: said in a warning). `undefined` when the
	 * archive changed since the scan (its hits are not shown; the next catch-up takes the change).
	 */
	private async remade(head: SessionText, why: "missing" | "damaged"): Promise<SessionText | undefined> {
		const writes: Promise<void>[] = [];
		const text = await this.rebuild(head.sessionId, writes);
		await Promise.all(writes);
		this.sayStoreFailures();
		if (text?.revision !== head.revision) return undefined;
		// (Not said when another process's rebuild removed it on purpose and is making it again.)
		if (why === "damaged" || this.options.texts.remakingElsewhere?.() !== true) this.options.warn(`search text rebuilt from the archives (1 ${why})`);
		this.checkedFiles.add(head.sessionId);
		return text;
	}

	/**
	 * Sessions whose projection a search found damaged where reading it could not tell (a shown
	 * hit's meta is not JSON, or its text lacks the match the scan found, with the file unchanged):
	 * each made again from its archive, into a file of its own (read before the pack), and said.
	 */
	repair(ids: readonly string[]): Promise<void> {
		return this.inTurn(async () => {
			const writes: Promise<void>[] = [];
			for (const id of ids) {
				this.packedSlices.delete(id);
				this.checkedFiles.delete(id);
				const text = await this.rebuild(id, writes);
				if (text) this.hold(text);
			}
			await Promise.all(writes);
			this.sayStoreFailures();
			this.options.warn(`search text rebuilt from the archives (${ids.length} damaged)`);
		});
	}

	/**
	 * Removes every stored projection (`TextStore.clear`) and forgets what was read of them: the
	 * next catch-up makes every session's again from its archive, without saying them missing (they
	 * were removed on purpose). What a rebuild does first. Overlays (sessions live in memory, not
	 * written yet) stay.
	 */
	remakeAll(): Promise<void> {
		return this.inTurn(async () => {
			await this.options.texts.clear();
			this.forgetWhatWasRead();
			this.stored.releaseSlices();
			this.unstored.clear();
			this.remaking = true;
		});
	}

	/**
	 * After an archive write: the session's projection, from the archive as stored (or a body
	 * made from it before the write) and the revision the write reports.
	 */
	put(source: SessionArchive | SessionTextBody, revision: string | undefined): Promise<void> {
		const body = "table" in source ? source : projectSessionText(source, { copyKeys: this.needsCopyKeys(source) });
		return this.inTurn(() => this.store(body, revision ?? this.nextLocalRevision()));
	}

	/**
	 * After reading an archive whose revision is not the projection's (it changed since the last
	 * catch-up): the projection made again from what was read.
	 */
	refresh(archive: SessionArchive, revision: string): Promise<void> {
		if (this.heads.get(archive.session.sessionId)?.revision === revision) return Promise.resolve();
		return this.put(archive, revision);
	}

	/**
	 * Runs `work` (an ingest that will store the projections of `sessions` sessions) with every
	 * projection stored meanwhile going into a new pack instead of a file each, when there is no pack
	 * and no projection file yet (a first ingest, `text/` deleted): the pack is in place when `work`
	 * ends. A first ingest of the bench's 919 sessions had created a file per session (≈ 1.1 s of
	 * its 9.7 s in creating them: the folder's journal stalls each creation while archives are
	 * written), then copied them all into a pack and removed them. Nothing reads the pack's sessions until it is in place: queries wait for the ingest's
	 * turn. If writing it fails, its sessions are made again from their archives by the next catch-up,
	 * with a warning.
	 */
	async packingWhile<T>(sessions: number, work: () => Promise<T>): Promise<T> {
		const { texts } = this.options;
		const worth =
			sessions >= (this.options.packAfter ?? PACK_AFTER) &&
			this.packs.possible &&
			!this.packs.active &&
			(await texts.list().then(
				(ids) => ids.length === 0,
				() => false,
			)) &&
			(await this.stored.openPack().then((pack) => {
				pack?.close();
				return pack === undefined;
			}));
		if (!worth) return work();
		let result: { readonly value: T } | undefined;
		const made = { withoutKeys: new Set<string>(), parents: new Set<string>() };
		this.ingestPack = made;
		try {
			await this.packs.making(async () => {
				result = { value: await work() };
				// Parents stored before their forks were seen are made again with copy keys, into the
				// pack too (its index keeps a session's last entry): else the next catch-up would make
				// each again as a file of its own.
				await this.inTurn(async () => {
					const writes: Promise<void>[] = [];
					for (const id of made.withoutKeys) {
						if (!made.parents.has(id)) continue;
						const text = await this.rebuild(id, writes, made.parents);
						if (text && this.heads.size > 0) this.hold(text);
					}
					await Promise.all(writes);
				});
			});
		} finally {
			this.ingestPack = undefined;
		}
		return (result as { readonly value: T }).value;
	}

	/**
	 * Whether a session's projection needs copy keys (fork de-duplication reads them): it has a
	 * parent, or a head held or a session live here names it as one. What this process cannot tell
	 * (an ingest holds no heads; a fork another process wrote) its next catch-up sees to: such a
	 * projection is made again with them (`forkParents`).
	 */
	needsCopyKeys(archive: SessionArchive, parents?: ReadonlySet<string>): boolean {
		if (archive.session.parentSessionId !== undefined) return true;
		const id = archive.session.sessionId;
		// A catch-up's parents (`forkParents`, kept up with the heads it holds) stand for the heads':
		// no pass over every head for each session it makes. The overlays may have changed since.
		if (parents?.has(id)) return true;
		for (const parent of parents ? this.parentsOfOverlays() : this.parentsNamed()) if (parent === id) return true;
		return false;
	}

	/** The parents the held heads and the overlays name. */
	private *parentsNamed(): Iterable<string> {
		for (const head of this.heads.values()) if (head.parentSessionId !== undefined) yield head.parentSessionId;
		yield* this.parentsOfOverlays();
	}

	private *parentsOfOverlays(): Iterable<string> {
		for (const { text } of this.overlays.values()) if (text.parentSessionId !== undefined) yield text.parentSessionId;
	}

	/**
	 * The sessions some session names as its parent, before a catch-up's loop: named by the heads
	 * held and the overlays, and by the archives of the sessions the loop will make again (their
	 * first bytes, `ArchiveStore.parentOf`). Each such session is made with copy keys before the
	 * loop visits it, so a search that meets a new fork hides its copies at once.
	 */
	private async forkParents(ids: readonly string[], revisions: ReadonlyMap<string, string> | undefined): Promise<Set<string>> {
		const parents = new Set(this.parentsNamed());
		const parentOf = this.options.archives.parentOf;
		if (!parentOf) return parents;
		for (const id of ids) {
			const head = this.heads.get(id);
			if (head !== undefined && (revisions === undefined || head.revision === revisions.get(id))) continue;
			// (919 archives' first bytes took 25–55 ms: Pi's input is echoed meanwhile.)
			await this.timeSlice.pause();
			const parent = await parentOf(id).catch(() => undefined);
			if (parent) parents.add(parent);
		}
		return parents;
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
			// Into the pack an ingest makes (`packingWhile`), else a file of its own.
			if (this.packs.append(body.sessionId, revision, bytes)) {
				const made = this.ingestPack;
				if (made && !body.copyKeys) made.withoutKeys.add(body.sessionId);
				if (made && body.info.parentSessionId !== undefined) made.parents.add(body.info.parentSessionId);
			} else await this.options.texts.write(body.sessionId, bytes);
		} catch (err) {
			// The archive is written; only its search text is not. The next catch-up makes it again.
			this.options.warn(`search text of session ${body.sessionId}: ${(err as Error).message}`);
			this.heads.delete(body.sessionId);
			return;
		}
		// A process that holds heads keeps this one current (an ingest-only process holds none).
		if (this.heads.size > 0) this.hold(SessionText.parse(bytes, body.sessionId, "whole"));
	}

	/**
	 * Keeps a session's head: a copy of its first bytes, so the buffer it was read into can go or
	 * be reused. `slab`: the copy goes into a shared slab (a search keeping the heads of hundreds of
	 * sessions with a hit allocates a few buffers, not one each).
	 */
	private hold(text: SessionText, slab = false): SessionText {
		const bytes = text.bytes.subarray(0, text.headBytes());
		const head = text.as(slab ? this.slab.copy(bytes) : Buffer.from(bytes), "head");
		this.heads.set(text.sessionId, head);
		return head;
	}

	private async catchUpNow(visit: ((text: SessionText, head: SessionText) => void) | undefined, only: string | undefined, how: CatchUpHow): Promise<void> {
		if (this.kept) this.forgetIfFolderReplaced();
		// A scan of every session reads those the pack holds from it (one open); another catch-up
		// opens it only for a session with no file of its own.
		const scanPack = visit !== undefined && only === undefined ? await this.stored.openPack() : undefined;
		const packs = this.stored.lazyPack(scanPack);
		try {
			await this.catchUpWith(visit, only, how, scanPack, packs);
		} finally {
			packs.close();
		}
	}

	private async catchUpWith(
		visit: ((text: SessionText, head: SessionText) => void) | undefined,
		only: string | undefined,
		{ fresh = false, needle, packing = false, newestFirst = false, missed }: CatchUpHow,
		pack: TextPack | undefined,
		packs: LazyPack,
	): Promise<void> {
		const { archives } = this.options;
		// A scan of every session needs every head's rows (one read of the heads file costs less
		// than reading them with each projection file and copying them out of the scan buffer),
		// unless it searches as it reads: then each file is read from its start, its hits copy
		// what they need out of its rows, and a one-shot search keeps no head (the heads file's rows
		// run to 4 MB on a 1 GB history, 150 MB over a million Q&A).
		const rows = visit !== undefined && only === undefined && needle === undefined;
		if (!this.headsFileRead) await this.loadHeads(rows ? "rows" : "headers");
		if (rows) await this.fillRows();
		const revisions = archives.revisions ? await archives.revisions(fresh ? { fresh } : undefined) : undefined;
		const ids = revisions ? [...revisions.keys()].sort() : await archives.list();
		const live = new Set(ids);
		// Sessions whose archive is gone since their head was read (their files are then removed).
		let gone = 0;
		for (const id of [...this.heads.keys()])
			if (!live.has(id)) {
				this.heads.delete(id);
				gone++;
			}
		for (const id of this.unstored.keys()) if (!live.has(id)) this.unstored.delete(id);
		const parents = await this.forkParents(ids, revisions);
		const rebuilt = { missing: 0, damaged: 0, made: 0 };
		// A projection is missing where one was known (a head held, from the heads file or an earlier
		// catch-up), or where none is known at all (`text/` deleted, a copied workspace): said in a
		// warning. A session never seen before whose archive is there without it is new: its writer
		// (this process's live update, another process's ingest) puts its projection right after its
		// archive, and a catch-up in between makes it itself, silently — as for one behind its archive.
		// (A session of this process's, its archive written and its projection not yet: an overlay.)
		const knewNothing = this.heads.size === 0;
		// Removed on purpose, here or by another process's rebuild still at work: made again silently
		// (asked of the store once, when a projection is first found missing).
		let onPurpose: boolean | undefined = this.remaking || undefined;
		const removedOnPurpose = () => (onPurpose ??= this.options.texts.remakingElsewhere?.() === true);
		// Rebuilt projections are written while the next are made (a few at a time).
		const writes: Promise<void>[] = [];
		// Nothing known of any session (no heads file, no pack: `text/` deleted, a copied workspace,
		// a new projection version): every projection made goes into a new pack, not a file each.
		const bulk =
			!this.packs.active &&
			this.heads.size === 0 &&
			only === undefined &&
			ids.length >= (this.options.packAfter ?? PACK_AFTER) &&
			this.packs.possible &&
			(await packs.get()) === undefined;
		// The event loop turns between sessions now and then (Pi's input is echoed meanwhile). What
		// may run then cannot change what this turn sees: projection writes wait for it, and an
		// overlay is dropped only after its session's projection was stored (`HistoryService`).
		// (A catch-up that makes a new pack keeps it in session id order, as every pack is written.)
		const order = newestFirst && !bulk ? [...ids].reverse() : ids;
		/**
		 * A visit of a projection read from disk. One that finds it damaged where the read could not
		 * tell (a row's meta: `SessionText.meta`) has added nothing: the session is made again from
		 * its archive, said in the warning, and visited once more.
		 */
		const visitStored = async (id: string, text: SessionText, head: SessionText): Promise<void> => {
			const see = visit as NonNullable<typeof visit>;
			try {
				see(text, head);
				return;
			} catch (err) {
				if (!(err instanceof SessionTextError)) throw err;
			}
			rebuilt.damaged++;
			rebuilt.made++;
			const remade = await this.rebuild(id, writes, parents);
			if (remade) see(remade, this.hold(remade));
		};
		const eachSession = async () => {
			for (const [index, id] of order.entries()) {
				await this.timeSlice.pause();
				// Said only once projections are being made again (the slow case); a catch-up that finds them current says nothing.
				if (rebuilt.made > 0) this.options.progress?.(index, ids.length);
				const revision = revisions?.get(id);
				const visited = visit !== undefined && (only === undefined || only === id);
				const overlay = this.overlays.get(id);
				if (overlay && visited) {
					visit(overlay.text, overlay.text);
					continue;
				}
				// Made earlier in this process and not stored (its write failed): not made again each query.
				const kept = this.unstored.get(id);
				// (Not one made without the copy keys a fork since asks for: made again, as a stored one is.)
				if (kept !== undefined && (revision === undefined || kept.revision === revision) && (kept.hasCopyKeys || !parents.has(id))) {
					const held = this.heads.get(id)?.revision === kept.revision ? (this.heads.get(id) as SessionText) : this.hold(kept);
					if (visited) visit(kept, held);
					continue;
				}
				let head = this.heads.get(id);
				const known = head !== undefined;
				if (head !== undefined && revision !== undefined && head.revision !== revision) head = undefined;
				// A parent made without copy keys (its first fork came since): made again with them.
				const keysWanted = parents.has(id);
				if (head !== undefined && keysWanted && !head.hasCopyKeys) head = undefined;
				if (head !== undefined && !visited) continue;
				// Read: for a scan, the body beside a current head, or the file to the end of its text
				// (into the reused buffer); else the head.
				if (head !== undefined && visited && head.hasRows) {
					// (Whole, not in chunks: in a process that keeps heads, the reused buffer is already in
					// memory and one read per session measured faster than chunks.)
					const body = await this.stored.body(head, pack);
					if (body) {
						await visitStored(id, body, head);
						continue;
					}
					head = undefined;
				}
				// A head known by its header line only (a new process's search): its file searched from the start.
				if (head !== undefined && visited && needle) {
					// (A head is kept from the second search on: `hold`.)
					const keep = this.searches > 0 || missed === undefined;
					const searched = await this.stored.searchFile(head, needle, pack, keep);
					if (searched === NOT_FOUND) {
						missed?.(head);
						continue;
					}
					if (searched) {
						// A hit copies what it needs out of the rows: a one-shot search keeps no head.
						await visitStored(id, searched, this.searches > 0 ? this.hold(searched, true) : head);
						continue;
					}
					head = undefined;
				}
				let text: SessionText | undefined;
				let file: FileRead | undefined;
				const read = await this.stored.read(id, visited ? "scan" : "head", packs, (f) => {
					file = f;
				});
				if (read instanceof SessionText && (revision === undefined || read.revision === revision) && (read.hasCopyKeys || !keysWanted)) text = read;
				else {
					if (read === undefined) {
						if ((known || knewNothing) && !this.overlays.has(id) && !removedOnPurpose()) rebuilt.missing++;
					} else if (!(read instanceof SessionText)) rebuilt.damaged++;
					// (Behind its archive, what another process's write leaves, or without the copy keys
					// it now needs: caught up silently.)
					text = await this.rebuild(id, writes, parents, file);
					rebuilt.made++;
					if (!text) continue;
				}
				if (head === undefined || !head.hasRows || head.revision !== text.revision) {
					head = this.hold(text);
					// The parents stay those the heads name (`rebuild` asks them, not every head).
					if (head.parentSessionId !== undefined) parents.add(head.parentSessionId);
				}
				if (visited) await visitStored(id, text, head);
			}
		};
		if (bulk) {
			const arena = TextArena.make();
			this.bulkTexts = arena && { arena, written: new WrittenTexts() };
			try {
				await this.packs.making(eachSession);
			} finally {
				this.bulkTexts = undefined;
			}
		} else await eachSession();
		// A session live in memory whose first archive write has not landed yet.
		if (visit) for (const [id, overlay] of this.overlays) if (!live.has(id) && (only === undefined || only === id)) visit(overlay.text, overlay.text);
		if (rebuilt.made > 0) this.options.progress?.(ids.length, ids.length);
		await Promise.all(writes);
		this.sayStoreFailures();
		if (only === undefined && this.remaking) {
			this.remaking = false;
			await this.options.texts.doneRemaking?.();
		}
		// Projection files without an archive: looked for (a listing of every file) when a session
		// was seen to go, when files were made again, and by a catch-up that packs (an ingest, Pi's
		// warm-up) — not by every search.
		if (gone > 0 || rebuilt.made > 0 || packing) await this.removeOrphans(live);
		if (this.headsFileBehind(packing)) await this.saveHeads();
		for (const head of this.heads.values()) {
			const newer = head.header.session.newerVersion;
			if (newer !== undefined)
				this.options.warn(
					`archive ${head.sessionId} was written by a newer pbot (archive version ${newer}): its session is listed, but its Q&A are not searched or read until pbot-history is updated`,
				);
		}
		const problems = [rebuilt.missing > 0 ? `${rebuilt.missing} missing` : "", rebuilt.damaged > 0 ? `${rebuilt.damaged} damaged` : ""].filter(Boolean);
		if (problems.length > 0) this.options.warn(`search text rebuilt from the archives (${problems.join(", ")})`);
	}

	/**
	 * A session's projection body made from its archive's bytes in a rebuild's arena
	 * (`readArchiveTexts`, `projectArchiveTexts`): `undefined` when there is no arena (not a
	 * rebuild) or the archive is not as this project writes them — it is then read the usual way
	 * (`madeFromArchive`), which says what it is. An archive removed meanwhile is read the usual way
	 * too, and found gone.
	 */
	private madeFromBytes(id: string, parents?: ReadonlySet<string>): { readonly body: SessionTextBody; readonly revision: string } | undefined {
		const bytes = this.bulkTexts;
		const read = bytes && this.options.archives.readTexts?.(id, bytes.arena);
		if (bytes === undefined || read === undefined || read === "unusual") return undefined;
		const alloc = this.packs.alloc;
		const copyKeys = this.needsCopyKeys(read.skeleton, parents);
		try {
			return { body: projectArchiveTexts(read, bytes.arena, bytes.written, { ...(alloc ? { alloc } : {}), copyKeys }), revision: read.revision };
		} catch {
			// Texts not as `readArchiveTexts` left them (never seen): the usual way says what the archive is.
			return undefined;
		}
	}

	/** A session's projection body made from its archive read and parsed whole; `undefined` when there is none or it cannot be read (said). */
	private async madeFromArchive(id: string, parents?: ReadonlySet<string>): Promise<{ readonly body: SessionTextBody; readonly revision: string } | undefined> {
		const { archives } = this.options;
		let read: { archive: SessionArchive; revision: string; newerVersion?: number } | undefined;
		try {
			if (archives.readWithRevision) read = await archives.readWithRevision(id);
			else {
				const archive = await archives.read(id);
				read = archive ? { archive, revision: this.nextLocalRevision() } : undefined;
			}
		} catch (err) {
			const newer = (err as ArchiveReadProblem).newer;
			if (newer && archives.revisions) {
				// Listed from its facts, with no Q&A (a catch-up says so each time, see `catchUpNow`).
				const revision = (await archives.revisions()).get(id);
				if (revision !== undefined) read = { archive: emptySessionArchive(newer.session), revision, newerVersion: newer.version };
			}
			if (!read) {
				// One moved aside is extracted again (the query runs once more: `Repairs`); its message says so.
				const named = `archive ${id}: ${(err as Error).message}`;
				this.options.warn((err as { quarantined?: unknown }).quarantined !== undefined ? named : `${named}; its session is left out of search`);
				this.options.unreadable?.(id, err as Error);
				return undefined;
			}
		}
		if (!read) return undefined; // removed meanwhile
		// Reading and parsing a large archive, then projecting it, each hold the thread for tens of ms.
		await this.timeSlice.pause();
		const alloc = this.packs.alloc;
		const body = projectSessionText(read.archive, { ...(alloc ? { alloc } : {}), copyKeys: this.needsCopyKeys(read.archive, parents) });
		return {
			body: read.newerVersion === undefined ? body : { ...body, info: { ...body.info, newerVersion: read.newerVersion } },
			revision: read.revision,
		};
	}

	/**
	 * A session's projection made again from its archive, and returned (whole); its write joins
	 * `writes`. `parents`: a catch-up's, for `needsCopyKeys`. `replaces`: its own file, as it was
	 * read (damaged, behind, or without the copy keys it needs).
	 */
	private async rebuild(id: string, writes: Promise<void>[], parents?: ReadonlySet<string>, replaces?: FileRead): Promise<SessionText | undefined> {
		const made = this.madeFromBytes(id, parents) ?? (await this.madeFromArchive(id, parents));
		if (made === undefined) return undefined;
		const { body, revision } = made;
		const bytes = finishSessionText(body, revision);
		// Into the pack a catch-up that finds nothing makes, else a file of its own.
		const text = SessionText.parse(bytes, id, "whole");
		if (!this.packs.append(id, revision, bytes, replaces)) {
			writes.push(
				this.options.texts.write(id, bytes).then(
					() => void this.unstored.delete(id),
					(err: Error) => {
						this.unstored.set(id, text);
						this.storeFailures.set(err.message, (this.storeFailures.get(err.message) ?? 0) + 1);
					},
				),
			);
			if (writes.length >= MAX_PENDING_WRITES) await Promise.all(writes.splice(0));
		}
		return text;
	}

	/** Says why projections could not be stored (`unstored`), once per reason, with how many. */
	private sayStoreFailures(): void {
		for (const [why, sessions] of this.storeFailures)
			this.options.warn(
				`search text of ${sessions} session(s) could not be stored (${why}): searched from what was made in memory, made again by the next process`,
			);
		this.storeFailures.clear();
	}

	/**
	 * A new process's heads from the heads file: whole, or header lines only (what listing
	 * sessions and the catch-up's revision check need; the rest is read when asked for:
	 * `fillRows`). Each is what reading its projection would give: the catch-up checks its revision
	 * against the archive's like any held head (the same revision means the same archive, so the
	 * same projection). A damaged file is ignored.
	 */
	private async loadHeads(part: "headers" | "rows"): Promise<void> {
		this.headsFileRead = true;
		const found = await this.stored.heads(part);
		if (!found) return;
		// (A head held already, a node's session that `read` looked at, came from this file or is newer.)
		for (const head of found.heads.values()) if (!this.heads.has(head.sessionId)) this.heads.set(head.sessionId, head);
		this.cachedRevisions = new Map([...found.heads.values()].map((h) => [h.sessionId, h.revision]));
	}

	/**
	 * Gives every held head its table and ids: from the heads file where its entry is of the same
	 * revision, else from the projection file (made again from the archive when that differs).
	 */
	private async fillRows(): Promise<void> {
		const missing = [...this.heads.values()].filter((h) => !h.hasRows);
		if (missing.length === 0) return;
		const cached = (await this.stored.heads("rows"))?.heads ?? new Map<string, SessionText>();
		const writes: Promise<void>[] = [];
		// A packed session's head comes from the pack, opened once for all of them.
		const packs = this.stored.lazyPack();
		try {
			for (const head of missing) {
				await this.timeSlice.pause();
				let full = cached.get(head.sessionId);
				if (full?.revision !== head.revision) {
					// Not in the heads file as held: it is written again at the end of the next catch-up.
					this.cachedRevisions.delete(head.sessionId);
					const read = await this.stored.read(head.sessionId, "head", packs);
					full = read instanceof SessionText && read.revision === head.revision ? read : await this.rebuild(head.sessionId, writes);
				}
				if (!full) this.heads.delete(head.sessionId);
				// From the heads file: a view of its bytes, read for this (no copy); else copied out of the scan buffer.
				else if (full === cached.get(head.sessionId)) this.heads.set(head.sessionId, full);
				else this.hold(full);
			}
		} finally {
			packs.close();
		}
		await Promise.all(writes);
	}

	/**
	 * Whether to write the heads file again: when there is none, when `HEADS_AFTER` sessions or
	 * more (or a quarter of them: a copied workspace) differ from it, or (`always`: an ingest,
	 * Pi's warm-up) when any does. It is a first
	 * guess for a new process, which reads the head of each session it has wrong from that
	 * session's file (a read of a few KB); writing it costs ≈ 40–80 ms on a history of 919 sessions
	 * (5.8 MB), which Pi paid in the first search after every exchange, and a one-shot `search`
	 * after every change another process made.
	 */
	private headsFileBehind(always: boolean): boolean {
		let differ = 0;
		for (const head of this.heads.values()) if (this.cachedRevisions.get(head.sessionId) !== head.revision) differ++;
		for (const id of this.cachedRevisions.keys()) if (!this.heads.has(id)) differ++;
		if (differ === 0) return false;
		return always || this.cachedRevisions.size === 0 || differ >= Math.min(HEADS_AFTER, Math.ceil(this.heads.size / 4));
	}

	/**
	 * Writes every held head into the heads file (after a catch-up that changed any): first every
	 * session's header line (all that listing sessions reads), then every table and ids.
	 */
	private async saveHeads(): Promise<void> {
		if (!this.options.texts.writeHeads) return;
		await this.fillRows();
		try {
			await this.options.texts.writeHeads(encodeHeadsFile(this.heads.values()));
			this.cachedRevisions = new Map([...this.heads.values()].map((h) => [h.sessionId, h.revision]));
		} catch {
			// A cache: the next process reads the projection files instead.
		}
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
