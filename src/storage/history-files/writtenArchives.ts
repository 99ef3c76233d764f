import { lstatSync } from "node:fs";
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

	/** Called holding the lock, right after writing: no other pbot writer can have replaced the file. */
	remember(file: string, archive: SessionArchive): void {
		const stamp = stampOf(file);
		if (stamp) this.byFile.set(file, { stamp, archive: new WeakRef(archive) });
		else this.byFile.delete(file);
	}

	/** The archive last written to `file`, if the file is still as that write left it (`stamp`) and the archive is still in memory. */
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
	return s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : undefined;
}
