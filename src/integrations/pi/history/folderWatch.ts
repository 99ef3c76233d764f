import { existsSync, type FSWatcher, watch } from "node:fs";
import { join } from "node:path";

/**
 * Which files of some folders changed since the last look, as the operating system reports it
 * (`fs.watch`: inotify, FSEvents, ReadDirectoryChangesW). Inside Pi every query refreshes, and a
 * refresh that finds nothing changed still lists the session folder and takes a `stat` of every
 * file in it (15–20 ms a query on 919 files, more with more); with this, a later refresh looks only
 * at the files reported changed.
 *
 * A folder that does not exist is watched by a `stat` at each `changedSinceMark` (it holds nothing until it is
 * made). It never claims to know more than it saw. It cannot say (`changedSinceMark` gives `undefined`) until a full
 * discovery has looked at the folders after the watchers were up (`mark`), after a watcher failed or
 * an event named no file, when the folders watched are not the ones asked for, and once the last
 * full look is older than `maxAgeMs` (a file system that reports nothing, like a network share, is
 * then still looked at now and then).
 *
 * Not chokidar (which the live tail uses): this needs only names, and chokidar would `stat` every
 * file of the folder as it starts and on every event to give events nobody here reads.
 */
export class FolderWatch {
	private readonly watchers = new Map<string, FSWatcher>();
	/** Folders that did not exist at the last look: nothing in them until they do (checked at each `changedSinceMark`). */
	private missing = new Set<string>();
	private changed = new Set<string>();
	/** Whether something may have changed unseen since the last `mark`. */
	private blind = true;
	private markedAt = 0;

	constructor(private readonly maxAgeMs = 60_000) {}

	/**
	 * Watches exactly `folders`; called as a full discovery begins, before it lists them, so that
	 * what it misses is reported. A folder that cannot be watched (missing, no permission, no
	 * watches left) leaves it blind.
	 */
	mark(folders: readonly string[]): void {
		for (const [dir, watcher] of this.watchers)
			if (!folders.includes(dir)) {
				watcher.close();
				this.watchers.delete(dir);
			}
		this.changed = new Set();
		this.missing = new Set();
		this.blind = false;
		this.markedAt = Date.now();
		for (const dir of folders) {
			if (this.watchers.has(dir)) continue;
			if (!existsSync(dir)) {
				this.missing.add(dir);
				continue;
			}
			try {
				// Not persistent: a watcher must never keep Pi running.
				const watcher = watch(dir, { persistent: false }, (_event, name) => {
					if (name) this.changed.add(join(dir, name.toString()));
					else this.blind = true;
				});
				watcher.on("error", () => {
					this.blind = true;
					watcher.close();
					if (this.watchers.get(dir) === watcher) this.watchers.delete(dir);
				});
				this.watchers.set(dir, watcher);
			} catch {
				this.blind = true;
			}
		}
	}

	/**
	 * The paths reported changed since the last `mark` (all of them, each time: a file a refresh
	 * failed to read is looked at again by the next), or `undefined` when it cannot say. Events the
	 * system has queued are delivered first (a turn of the event loop with its poll phase), so a
	 * write made before the call is seen.
	 */
	async changedSinceMark(folders: readonly string[]): Promise<ReadonlySet<string> | undefined> {
		await new Promise<void>((resolve) => setTimeout(() => setImmediate(resolve), 0));
		if (this.blind || Date.now() - this.markedAt > this.maxAgeMs) return undefined;
		if (folders.length !== this.watchers.size + this.missing.size || folders.some((dir) => !this.watchers.has(dir) && !this.missing.has(dir))) return undefined;
		// A folder made since (Pi makes its session folder with the first answer) may hold anything.
		for (const dir of this.missing) if (existsSync(dir)) return undefined;
		return new Set(this.changed);
	}

	/** Stops watching (`changedSinceMark` then cannot say until the next `mark`). */
	close(): void {
		for (const watcher of this.watchers.values()) watcher.close();
		this.watchers.clear();
		this.blind = true;
	}
}
