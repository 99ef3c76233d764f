import type { Observable } from "rxjs";
import type { SessionArchive } from "./archive.ts";

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
	write(archive: SessionArchive): Promise<void>;
}

/** One native session file, as the service may read it. */
export interface SessionSource {
	/** Opaque name for messages and de-duplication (a path, in practice). Never stored in an archive. */
	readonly key: string;
	/** Session id from the file name, for a file whose header cannot be read. */
	readonly fallbackSessionId?: string;
	/** The file's bytes, in chunks, from the start. */
	read(): Observable<Uint8Array>;
	/**
	 * Something that changes whenever the file's content may have changed (size, mtime, inode),
	 * or `undefined` when the file is gone. Lets a refresh skip files it has already read.
	 */
	fingerprint?(): Promise<string | undefined>;
}

/** Finds the session files that belong to the workspace. */
export interface SessionDiscovery {
	discover(): Promise<{ readonly sources: readonly SessionSource[]; readonly warnings: readonly string[] }>;
}
