import { type BigIntStats, lstatSync } from "node:fs";
import type { SessionArchive } from "../../services/history/projections/archive.ts";
import { kindOf, NotRegularFileError } from "./regularFile.ts";

interface Written {
	readonly stamp: string;
	/**
	 * Weak: the caller holds what it wrote while it still works on the session; once it lets the
	 * archive go (an ingest that keeps nothing in memory), so does this, and a later write reads
	 * the file again.
	 */
	readonly archive: WeakRef<SessionArchive>;
}

/**
 * What one archive store last wrote, per archive file: its stat after the write and the archive
 * written, so a write need not read again an archive nobody else touched since. One per store
 * instance (`workspaceArchiveStore`), not per process: two stores on one workspace in one process
 * are two writers, and each must see the other's write as a change (the file's stamp tells).
 */
export class WrittenArchives {
	private readonly byFile = new Map<string, Written>();

	/**
	 * What `file` holds now: `archive`, as of `stamp`. A writer calls it holding the lock, right
	 * after writing (no other pbot writer can have replaced the file), and the file's stamp is taken
	 * then. A reader passes the stamp of the very descriptor it read through (`readRegularFileStamped`):
	 * archives are replaced by rename, never changed in place by pbot, so while the file keeps that
	 * stamp it holds those bytes. (Pi's runtime reads the current session's archive to hold it, and
	 * its first live write then merged with a second read and parse of the same file: ≈ 55 ms for a
	 * 30 MB session's archive.)
	 */
	remember(file: string, archive: SessionArchive, stamp: string | undefined = stampOf(file)): void {
		if (stamp) this.byFile.set(file, { stamp, archive: new WeakRef(archive) });
		else this.byFile.delete(file);
	}

	/** The archive last written to (or read from) `file`, if the file is still as it was then (`stamp`) and the archive is still in memory. */
	known(file: string, stamp: string): SessionArchive | undefined {
		const known = this.byFile.get(file);
		const archive = known?.archive.deref();
		return known && archive && stamp === known.stamp ? archive : undefined;
	}

	/** The file was moved aside. */
	forget(file: string): void {
		this.byFile.delete(file);
	}
}

/**
 * The file's identity and last change, or `undefined` when there is no file (a stat: synchronous,
 * see fileLock). Not through a link: anything but a regular file at an archive's name (a dangling
 * link looks absent through itself, and the creating `link` would then fail forever) is refused.
 */
export function stampOf(file: string): string | undefined {
	const s = lstatSync(file, { bigint: true, throwIfNoEntry: false });
	if (s && !s.isFile()) throw new NotRegularFileError(file, kindOf(s));
	return s ? stampOfStats(s) : undefined;
}

/** A file's stamp from its `stat` (bigint, for the nanoseconds): identity, size, modification and change times. */
export function stampOfStats(s: BigIntStats): string {
	return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}
