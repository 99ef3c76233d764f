import type { Observable } from "rxjs";
import type { SessionArchive } from "../projections/archive.ts";
import type { ArchiveTextsRead } from "../projections/text/projectArchiveTexts.ts";
import type { TextArena } from "../model/textArena.ts";
import type { SessionFacts } from "../model/types.ts";

/**
 * What the history service needs from the outside world. The service never touches the file
 * system or Pi itself; integrations implement these (and tests use in-memory twins).
 */

/** Where archives live (the workspace's `.pi/pbot/history/`). */
export interface ArchiveStore {
	/** Session ids that have an archive. */
	list(): Promise<string[]>;
	/** An archive, or `undefined` when there is none. Throws on a damaged one. */
	read(sessionId: string): Promise<SessionArchive | undefined>;
	/**
	 * Stores an archive. The workspace store merges it with what is stored (under a lock), so two
	 * processes writing one session lose neither's nodes nor summaries. It says what it stored
	 * (when it knows): the revision, and the archive itself when a merge made it differ from the
	 * one given.
	 */
	write(archive: SessionArchive, options?: ArchiveWriteOptions): Promise<ArchiveWritten | void>;
	/** Makes the writes done so far with `deferDurability` durable (a folder sync). */
	sync?(): Promise<void>;
	/**
	 * The current revision of every stored archive, by session id: a string that changes whenever
	 * the archive does (the workspace store: its size and modification time). What the text
	 * projection is checked against. A store without it is trusted to change only through this
	 * process's writes. `fresh`: look at every archive, never at a cache of them (see the
	 * workspace store: an archive changed in place by hand shows only there).
	 */
	revisions?(options?: { readonly fresh?: boolean }): Promise<ReadonlyMap<string, string>>;
	/** An archive and the revision of exactly what was read, or `undefined` when there is none. */
	readWithRevision?(sessionId: string): Promise<{ readonly archive: SessionArchive; readonly revision: string } | undefined>;
	/**
	 * For a rebuild of the text projection: an archive read into `arena` with its texts left there as
	 * JSON (`ArchiveTextsRead`), `undefined` when there is none, or `"unusual"` when it is not as this
	 * project writes archives (damaged, older, newer, written by hand…): `readWithRevision` then reads
	 * it and says what it is.
	 */
	readTexts?(sessionId: string, arena: TextArena): ArchiveTextsRead | "unusual" | undefined;
	/** The current revision of one stored archive (the workspace store: a `stat`), or `undefined` when there is none. */
	revisionOf?(sessionId: string): string | undefined;
	/**
	 * The session an archive names as its parent, read cheaply (the workspace store: from the
	 * archive's first bytes): `null` for none, `undefined` when it cannot tell. The text projection
	 * asks it of the archives it is about to project, to know every fork chain before a search
	 * visits a session (`TextProjection`, copy keys).
	 */
	parentOf?(sessionId: string): Promise<string | null | undefined>;
}

export interface TextReadOptions {
	readonly offset?: number;
	readonly length?: number;
	readonly into?: Buffer;
	/**
	 * Told the bytes read first (`length` of them, from the start), says how many the caller needs
	 * in all: the rest is read through the same open file (a header says how long its file's
	 * parts are).
	 */
	readonly extent?: (first: Buffer) => number;
	/**
	 * Told the identity of the file read (`StoredFileReader.identity`), where the store can tell:
	 * what a caller that may remove the file later removes it by (`TextStore.removeIf`), so a
	 * file another process wrote meanwhile is kept.
	 */
	readonly identity?: (identity: string) => void;
}

/** What an archive write stored. */
export interface ArchiveWritten {
	/** The revision of the archive as stored (as `revisions()` will report it until the next write). */
	readonly revision: string;
	/** The archive as stored, when it is not the one given (merged with another process's). */
	readonly archive?: SessionArchive;
}

/**
 * Where the text projection lives (the workspace's `.pi/pbot/text/`): one file per session,
 * derived from its archive, rebuilt whenever it is missing, damaged or behind. Losing it loses
 * nothing.
 */
/**
 * What an `ArchiveStore` read error may carry: `newer`, an archive written by a newer pbot, with
 * the session facts it could still read (the session is listed from them); `quarantined`, where a
 * damaged archive's bytes were moved (the session is then extracted again from its native file).
 */
export interface ArchiveReadProblem {
	readonly quarantined?: string;
	readonly newer?: { readonly version: number; readonly session: SessionFacts };
}

export interface TextStore {
	/** Session ids that have a projection file. */
	list(): Promise<string[]>;
	/**
	 * `length` bytes of the file from `offset` (default: from the start, to the end), or
	 * `undefined` when there is none. With `into`, the bytes go there when they fit (the result is
	 * then a view of it): a scan reads every file into one buffer instead of allocating one each.
	 */
	read(sessionId: string, options?: TextReadOptions): Promise<Buffer | undefined>;
	/**
	 * Reads `[offset, offset + length)` of a session's file a chunk at a time through `into`, handing
	 * each chunk (valid only until `onChunk` returns) and its offset in the file to `onChunk`: what a
	 * scan reads, in pieces that stay in the processor's cache between the read and the search. One
	 * open: every chunk is of the same file. `false` when there is no file or it is shorter.
	 */
	readChunks(
		sessionId: string,
		range: { readonly offset: number; readonly length: number },
		into: Buffer,
		onChunk: (bytes: Buffer, at: number) => void,
	): Promise<boolean>;
	/** Replaces a session's projection atomically (a crash leaves the old file or the new one). */
	write(sessionId: string, bytes: Uint8Array): Promise<void>;
	remove(sessionId: string): Promise<void>;
	/**
	 * One file holding every session's head (`TextProjection` writes and checks it): what a new
	 * process reads instead of opening every projection to list sessions. Optional; a cache. Read
	 * in parts (`offset`, `length`, `extent` as for `read`): listing sessions needs only its first.
	 */
	readHeads?(options?: TextReadOptions): Promise<Buffer | undefined>;
	writeHeads?(bytes: Uint8Array): Promise<void>;
	/**
	 * The pack: one file holding many sessions' projections (up to the end of their text) back to
	 * back, which a search reads instead of opening a file per session (`textPack.ts` says what is
	 * in it; the projection checks each entry's revision). Optional; a cache. `undefined` when there
	 * is none.
	 */
	openPack?(): Promise<StoredFileReader | undefined>;
	/** Replaces the pack atomically with the bytes `fill` hands to `append`, a piece at a time. */
	writePack?(fill: (append: (bytes: Uint8Array) => void) => Promise<void>): Promise<void>;
	/**
	 * A session's file held open for reads by range (`undefined` when there is none): what a new
	 * pack copies from, a piece at a time with the event loop turning between pieces, every piece
	 * of the same file even if it is replaced meanwhile.
	 */
	openFile?(sessionId: string): Promise<StoredFileReader | undefined>;
	/**
	 * Removes a session's file if it is still the file that was opened as `identity`
	 * (`StoredFileReader.identity`): what a new pack copied, now its only copy. `false` when it was
	 * not removed (gone, or replaced since: a newer projection, which is kept).
	 */
	removeIf?(sessionId: string, identity: string): Promise<boolean>;
	/**
	 * Removes every projection, the heads and the pack: a rebuild makes them all again from the
	 * archives (damage inside a document's words is found by no check a search can afford). Leaves
	 * a note that they were removed on purpose (`remakingElsewhere`), until `doneRemaking`.
	 */
	clear(): Promise<void>;
	/**
	 * Whether another process, alive, removed the projections on purpose (`clear`) and has not made
	 * them again yet: a catch-up that finds them missing then makes them without a warning.
	 */
	remakingElsewhere?(): boolean;
	/** The projections removed by this process's `clear` are made again: its note goes. */
	doneRemaking?(): Promise<void>;
	/** The folder's identity (device and inode), `undefined` when there is none: it changes when the folder is deleted or made again. */
	folderIdentity?(): string | undefined;
}

/** A stored file held open for reads by range (the text pack). */
export interface StoredFileReader {
	readonly size: number;
	/**
	 * Changes whenever the file is replaced or changed (its inode, size and time), where the store
	 * can tell: what a reader that parsed the file's index before may reuse it by.
	 */
	readonly identity?: string;
	/** Reads `length` bytes at `offset` into `into` from its start; returns how many (fewer at the file's end). */
	read(into: Buffer, offset: number, length: number): number;
	close(): void;
}

export interface ArchiveWriteOptions {
	/**
	 * The write is atomic (a crash leaves the old or the new archive) but becomes durable only at
	 * the next `sync()`: for an ingest's writes, which can be redone from the native files and are
	 * vouched for (by checkpoints) only after that sync. One folder sync per ingest instead of one
	 * per archive: each is a journal commit that stalls every other file creation meanwhile.
	 */
	readonly deferDurability?: boolean;
	/**
	 * Per Q&A or summary object, its JSON as UTF-8, kept across writes of a session written again
	 * and again (the live one): its unchanged records are not encoded again. The store fills it.
	 */
	readonly jsonCache?: WeakMap<object, Uint8Array>;
}

/** One native session file, as the service may read it. */
export interface SessionSource {
	/** Opaque name for messages and de-duplication (a path, in practice). Never stored in an archive. */
	readonly key: string;
	/** Session id from the file name, for a file whose header cannot be read. */
	readonly fallbackSessionId?: string;
	/**
	 * The file's bytes, in chunks, from the start. A source that can tells `onState` what the file
	 * looked like when it was opened (its `state()`, taken before the first byte is read): the
	 * ingest then need not open the file a second time for its checkpoint.
	 */
	read(onState?: (state: SourceState) => void): Observable<Uint8Array>;
	/** The key `state()` will have (`SourceState.key`), known without touching the file. */
	readonly stateKey?: string;
	/**
	 * Something that changes whenever the file's content may have changed (size, mtime, inode),
	 * or `undefined` when the file is gone. Lets a refresh skip files it has already read.
	 */
	fingerprint?(): Promise<string | undefined>;
	/**
	 * What the file looks like now, for a checkpoint that outlives the process (see
	 * `CheckpointStore`), or `undefined` when the file is gone. Taken before the file is read.
	 */
	state?(): Promise<SourceState | undefined>;
}

/**
 * A session file's identity and shape, as kept in a checkpoint: never a path. `key` is the file's
 * name with the session id it carries (`<sessionId>/<file name>`), so the same file copied to
 * another machine, or moved, keeps its key.
 */
export interface SourceState {
	readonly key: string;
	readonly size: number;
	readonly mtimeMs: number;
	/** A hash of the file's first bytes (its header and first entries): a rewrite shows here. */
	readonly headHash: string;
}

/** A source as last ingested: its state then, and the session (archive) it went into. */
export interface SourceCheckpoint {
	readonly size: number;
	readonly mtimeMs: number;
	readonly headHash: string;
	/** The session (archive) the file was ingested into. */
	readonly sessionId: string;
	/**
	 * The file's `fingerprint` when it was ingested (size, mtime, inode, ctime). When a file's
	 * fingerprint is still this one it is unchanged, and its head is not read; a copy (new
	 * inodes) falls back to the size, mtime and head comparison.
	 */
	readonly stamp?: string;
}

/**
 * Where per-file checkpoints persist between processes (the workspace's
 * `.pi/pbot/checkpoints.json`), so that a new process skips the files it finds unchanged and
 * reads only archives. Losing it costs one re-read of every file, nothing else: a checkpoint is
 * only trusted when the archive it names is present.
 */
export interface CheckpointStore {
	/** The checkpoints by `SourceState.key` (empty when there are none or they are unreadable). */
	load(): Promise<ReadonlyMap<string, SourceCheckpoint>>;
	/** Records these checkpoints (merged over what is stored: other processes' entries stay). */
	save(checkpoints: ReadonlyMap<string, SourceCheckpoint>): Promise<void>;
	/** Whether what is stored may differ from what the last `load` or `save` saw (another process saved since): a `stat`. */
	changed?(): boolean;
}

/** Who holds the ingest lease another process waits for: for a person to read. */
export interface LeaseHolder {
	readonly pid: number;
	readonly host: string;
	/** When it was taken (ISO time; empty if unknown). */
	readonly since: string;
}

/**
 * One reader of many session files per workspace at a time, across processes (the workspace's
 * `.pi/pbot/ingest.lock`): `runIngest` holds it for a run that reads many files, so a second
 * process waits and then finds them archived, instead of reading them all again at the same time.
 */
export interface IngestLease {
	/**
	 * Runs `run` holding the lease. `onWait` is told who holds it, once, if another process does;
	 * `signal` stops the wait (the call rejects with its reason and `run` is not called).
	 */
	hold<T>(run: () => Promise<T>, options?: { readonly onWait?: (holder: LeaseHolder) => void; readonly signal?: AbortSignal }): Promise<T>;
}

/**
 * Which process makes a session's summaries, across processes (a lock file per session): two Pi
 * sessions summarizing one workspace's backlog, or `pbot-history summarize` beside Pi, would
 * otherwise pay for every summary twice.
 */
export interface SummaryClaims {
	/** The session's summaries are this process's to make until the release is called; `undefined`: another process is making them. */
	claim(sessionId: string): Promise<(() => Promise<void>) | undefined>;
}

/** Finds the session files that belong to the workspace. */
export interface SessionDiscovery {
	discover(): Promise<{ readonly sources: readonly SessionSource[]; readonly warnings: readonly string[] }>;
	/**
	 * The sources that may have changed since the last `discover` (a watcher knows), or `undefined`
	 * when it cannot say. A refresh that would skip unchanged files looks only at these; the others
	 * are as the last discovery found them.
	 */
	changedSince?(): Promise<{ readonly sources: readonly SessionSource[]; readonly warnings: readonly string[] } | undefined>;
}
