import type { StoredFileReader, TextStore } from "../../service/ports.ts";
import type { SessionText } from "./sessionText.ts";
import { encodePackIndex, type PackEntry, type TextPack } from "./textPack.ts";

/**
 * Bytes copied at a time, the event loop turning between them when its slice is used up: the
 * pack is as large as the text it holds and is never held whole, and one session can be 100 MB
 * (copied whole at once, a 30 MB session held Pi's loop ≈ 165 ms at a start that packed).
 */
const COPY_CHUNK = 1 << 20;

/** Reads `length` bytes at `offset` into `into` from its start; how many it got (fewer at the end). */
type ReadRange = (into: Buffer, offset: number, length: number) => number;

/** A session's own file a new pack copied (what it was, by `StoredFileReader.identity`): removed once the pack is in place. */
export interface PackedFile {
	readonly sessionId: string;
	readonly identity: string;
}

/**
 * Writes a new pack (`textPack.ts`) of these heads' projections: each copied from the pack it
 * replaces when that holds it at the head's revision (one file read in order), else from the
 * session's own file. An entry is kept only when the bytes copied begin with the head's header
 * line (the same revision) and are the whole file: a file replaced or removed meanwhile (another
 * process) is left out, and read from its own file (or made again) by searches. `pause` lets the
 * event loop turn (Pi's input is echoed meanwhile), before each session and after each piece
 * copied (`pieceBytes`; tests make it small). Returns how many sessions it holds, and the files that
 * hold what their entries hold (each now a second copy: those it copied, and any left beside an
 * entry of the old pack).
 */
export async function writeTextPack(
	texts: TextStore,
	heads: readonly SessionText[],
	old: TextPack | undefined,
	pause: () => Promise<void> | undefined,
	pieceBytes = COPY_CHUNK,
): Promise<{ readonly packed: number; readonly files: readonly PackedFile[] }> {
	if (!texts.writePack || !texts.openFile) return { packed: 0, files: [] };
	const chunk = Buffer.allocUnsafe(pieceBytes);
	const entries: PackEntry[] = [];
	const files: PackedFile[] = [];
	await texts.writePack(async (append) => {
		let end = 0;
		/** Copies `head`'s bytes through `read`; how many were appended (all of them when they are the head's). */
		const copy = async (head: SessionText, read: ReadRange): Promise<number> => {
			const line = head.bytes.subarray(0, head.headerBytes());
			const length = head.end;
			let done = 0;
			while (done < length) {
				const n = read(chunk, done, Math.min(chunk.length, length - done));
				if (n === 0) break;
				const bytes = chunk.subarray(0, n);
				// Another revision's bytes are not copied (the header line comes first: nothing of them was).
				if (done < line.length && !bytes.subarray(0, Math.min(n, line.length - done)).equals(line.subarray(done, done + n))) break;
				append(bytes);
				done += n;
				await pause();
			}
			return done;
		};
		for (const head of [...heads].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0))) {
			await pause();
			const from = old?.entryFor(head);
			let file: StoredFileReader | undefined;
			let copied = 0;
			/** Its file is the head's bytes (a copy the pack makes redundant): of the head's length, its header line. */
			let fileIsHeads = false;
			try {
				file = await texts.openFile?.(head.sessionId);
				if (from && old) {
					copied = await copy(head, (into, offset, length) => old.read(from, offset, length, into)?.length ?? 0);
					// A file beside the old entry (a writer stopped between its pack and the removals): the same bytes if the same header line.
					if (file && file.size === head.end) {
						const line = head.bytes.subarray(0, head.headerBytes());
						const start = Buffer.allocUnsafe(line.length);
						fileIsHeads = file.read(start, 0, line.length) === line.length && start.equals(line);
					}
				} else if (file) {
					copied = await copy(head, (into, offset, length) => file?.read(into, offset, length) ?? 0);
					// (A file longer than its header says is not the head's: not copied whole, so not removed.)
					fileIsHeads = file.size === copied;
				}
			} catch {
				// A file that cannot be read: left out (read from its own file by searches, or made again).
			} finally {
				file?.close();
			}
			if (copied === head.end) {
				entries.push({ sessionId: head.sessionId, revision: head.revision, offset: end, length: copied });
				if (fileIsHeads && file?.identity !== undefined) files.push({ sessionId: head.sessionId, identity: file.identity });
			}
			end += copied;
		}
		append(encodePackIndex(entries, end));
	});
	return { packed: entries.length, files };
}
