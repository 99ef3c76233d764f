/**
 * When and how the text projection is packed (`textPack.ts`): a new pack behind the catch-ups once
 * many sessions have files of their own (`behind`), and a catch-up that finds nothing making every
 * session into a new pack as it goes (`making`). `TextProjection` decides when; this writes.
 */
import { ReusedBuffer } from "../../model/reusedBuffer.ts";
import type { ArchiveStore, TextStore } from "../../service/ports.ts";
import type { TimeSlice } from "../../service/timeSlice.ts";
import type { SessionText } from "./sessionText.ts";
import type { StoredTexts } from "./storedTexts.ts";
import { encodePackIndex, type PackEntry } from "./textPack.ts";
import { writeTextPack } from "./writeTextPack.ts";

/**
 * Sessions a pack may leave to their own files before a catch-up that packs makes a new one: each
 * costs a search an open, a `stat` and a close (≈ 30 µs here), a new pack a copy of every
 * session's text. So a pack is made again after many sessions changed, not after each exchange.
 */
export const PACK_AFTER = 64;
/** The largest projection a pack-making catch-up makes in its reused buffer (larger ones get their own). */
const MADE_SCRATCH_BYTES = 32 * 1024 * 1024;

export interface ProjectionPacksOptions {
	readonly archives: ArchiveStore;
	readonly texts: TextStore;
	readonly stored: StoredTexts;
	readonly timeSlice: TimeSlice;
	readonly warn: (message: string) => void;
	/** Sessions with files of their own before a new pack (`PACK_AFTER`; tests: fewer). */
	readonly packAfter: number;
	/** The heads as the projection holds them now. */
	readonly heads: () => readonly SessionText[];
}

export class ProjectionPacks {
	/** The pack being written behind the catch-ups (`behind`), if any. */
	private writing: Promise<void> | undefined;
	/** While a catch-up makes every session into a new pack (`making`): where each goes. */
	private made: MadeInPack | undefined;

	constructor(private readonly options: ProjectionPacksOptions) {}

	/** Whether a pack is being made now (`making`): projections stored meanwhile go into it (`append`). */
	get active(): boolean {
		return this.made !== undefined;
	}

	/** Whether packs can be written here: a pack entry is trusted by its revision, which only a store that reports them gives. */
	get possible(): boolean {
		return this.options.texts.writePack !== undefined && this.options.archives.revisions !== undefined;
	}

	/**
	 * After a catch-up that packs: a new pack when the one there leaves `packAfter` sessions or
	 * more to their own files. Outside the catch-ups' turns, one at a time: searches and updates go
	 * on meanwhile (a 175 MB pack takes ≈ 0.3–0.5 s), reading the old pack or the files, and what a
	 * new pack copies is checked against the heads as they were (a file replaced meanwhile is left
	 * out). Then the files it copied are removed, if they are still those files: the pack is their
	 * only copy, and a file replaced since (a newer projection) stays.
	 */
	behind(): Promise<void> {
		this.writing ??= this.now().finally(() => {
			this.writing = undefined;
		});
		return this.writing;
	}

	private async now(): Promise<void> {
		if (!this.possible) return;
		const { texts, stored, timeSlice } = this.options;
		const heads = [...this.options.heads()];
		const pack = await stored.openPack();
		try {
			const missing = pack ? pack.missing(heads) : heads.length;
			if (missing < this.options.packAfter || missing === 0) return;
			const { files } = await writeTextPack(texts, heads, pack, () => timeSlice.pause());
			// (A file that cannot be removed, open in another process on Windows, is only a second copy: left.)
			await this.remove(files);
		} catch (err) {
			// A cache: searches read every session's own file meanwhile.
			this.options.warn(`search text pack: ${(err as Error).message}`);
		} finally {
			pack?.close();
		}
	}

	/**
	 * Runs a catch-up's loop over the sessions (`eachSession`) with every projection it makes
	 * appended to a new pack (`append`) instead of written to a file of its own: one file created
	 * instead of hundreds (creating 919 files took ≈ 0.3–0.7 s of a rebuild here, the folder's
	 * journal stalling each creation while the others' data was written out). The pack is in place
	 * when the loop ends. If writing it fails, the catch-up still ends (the sessions are searched
	 * from memory this time, made again next time, with a warning); if the loop fails, its error is
	 * the catch-up's, as it is without a pack.
	 */
	async making(eachSession: () => Promise<void>): Promise<void> {
		const writePack = this.options.texts.writePack;
		if (!writePack) return eachSession();
		// One pack writer at a time in this process (one behind may still be copying).
		await this.writing;
		let failed: { readonly error: unknown } | undefined;
		const replaced: StoredFile[] = [];
		try {
			await writePack(async (append) => {
				const made: MadeInPack = { append, entries: [], end: 0, scratch: new ReusedBuffer(MADE_SCRATCH_BYTES), replaced };
				this.made = made;
				try {
					await eachSession();
				} catch (error) {
					failed = { error };
					throw error;
				} finally {
					this.made = undefined;
				}
				if (made.broken) throw made.broken;
				if (made.entries.length === 0) throw new NothingMade();
				// (A session appended twice, made again with copy keys: its last entry is the one.)
				append(encodePackIndex([...new Map(made.entries.map((e) => [e.sessionId, e])).values()], made.end));
			});
			// Files the pack's entries replace (read before an entry, they would hide it), once it is in
			// place. One that cannot be removed is read, found behind and made again by the next catch-up.
			await this.remove(replaced);
		} catch (err) {
			if (failed) throw failed.error;
			if (!(err instanceof NothingMade)) this.options.warn(`search text pack: ${(err as Error).message}`);
		}
	}

	/**
	 * Removes sessions' own files that a pack now stands for, each only if it is still the file
	 * that was read or copied (`identity`): another process may have written a newer projection
	 * since, which is kept. A file read from a store that cannot tell its identity is removed by
	 * name. The loop turns between removals (919 took ≈ 70 ms of Pi's thread in one go).
	 */
	private async remove(files: readonly StoredFile[]): Promise<void> {
		const { texts, timeSlice } = this.options;
		for (const { sessionId, identity } of files) {
			await timeSlice.pause();
			await (identity !== undefined ? texts.removeIf?.(sessionId, identity) : texts.remove(sessionId))?.catch(() => undefined);
		}
	}

	/**
	 * Where a projection being made now is made: while a pack is made, one reused buffer (nothing
	 * keeps the bytes past the session: the pack copies them at once, and a visit keeps only the
	 * head it is given, copied, as it does of a file read into the scan buffer); else `undefined`.
	 */
	get alloc(): ((size: number) => Buffer) | undefined {
		const made = this.made;
		return made && made.broken === undefined ? (size) => made.scratch.take(size) : undefined;
	}

	/**
	 * Appends a projection made now to the pack being made; `false` when none is (the caller writes
	 * its file). `replaces`: the session's own file was read (damaged, behind its archive, or without
	 * the copy keys it needs), and is removed once the pack is in place if it is still that file (a
	 * file is read before a pack entry).
	 */
	append(sessionId: string, revision: string, bytes: Buffer, replaces?: FileRead): boolean {
		const made = this.made;
		if (!made || made.broken !== undefined) return false;
		try {
			made.append(bytes);
			made.entries.push({ sessionId, revision, offset: made.end, length: bytes.length });
			made.end += bytes.length;
			if (replaces) made.replaced.push({ sessionId, ...replaces });
		} catch (err) {
			// (A full disk: the pack is given up at the end of the loop, with a warning, as a file's write failing is.)
			made.broken = err as Error;
		}
		return true;
	}
}

/** A session's own projection file as it was read: its identity where the store tells it (`TextReadOptions.identity`). */
export interface FileRead {
	readonly identity?: string;
}

/** A session's own file, by its identity where known: what a pack stands for once it is in place. */
interface StoredFile extends FileRead {
	readonly sessionId: string;
}

/** A pack being written by a catch-up that makes every session (`ProjectionPacks.making`). */
interface MadeInPack {
	readonly append: (bytes: Uint8Array) => void;
	/** What the projections are made in, one after another. */
	readonly scratch: ReusedBuffer;
	readonly entries: PackEntry[];
	/** Sessions whose file an entry replaces (`append`). */
	readonly replaced: StoredFile[];
	end: number;
	/** Appending failed: the pack is given up, and the projections made after go to files. */
	broken?: Error;
}

/** A catch-up meant to make every session into a pack made none (their files were current): no pack is written. */
class NothingMade extends Error {}
