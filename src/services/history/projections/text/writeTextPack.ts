import type { TextStore } from "../../service/ports.ts";
import type { SessionText } from "./sessionText.ts";
import { encodePackIndex, type PackEntry, type TextPack } from "./textPack.ts";

/** Bytes copied at a time: the pack is as large as the text it holds, and is never held whole. */
const COPY_CHUNK = 1 << 20;

/**
 * Writes a new pack (`textPack.ts`) of these heads' projections: each copied from the pack it
 * replaces when that holds it at the head's revision (one file read in order), else from the
 * session's own file. An entry is kept only when the bytes copied begin with the head's header
 * line (the same revision) and run to the end of its text: a file replaced or removed meanwhile
 * (another process) is left out, and read from its own file by searches. `pause` lets the event
 * loop turn between sessions (Pi's input is echoed meanwhile). Returns how many sessions it holds.
 */
export async function writeTextPack(
	texts: TextStore,
	heads: readonly SessionText[],
	old: TextPack | undefined,
	pause: () => Promise<void> | undefined,
): Promise<number> {
	if (!texts.writePack) return 0;
	const chunk = Buffer.allocUnsafe(COPY_CHUNK);
	const entries: PackEntry[] = [];
	await texts.writePack(async (append) => {
		let end = 0;
		for (const head of [...heads].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0))) {
			await pause();
			const line = head.bytes.subarray(0, head.headerBytes());
			const length = head.scanBytes();
			let copied = 0;
			const onChunk = (bytes: Buffer, at: number) => {
				// Another revision's bytes are not copied (the header line comes first: nothing of them was).
				if (at < line.length && !bytes.subarray(0, Math.min(bytes.length, line.length - at)).equals(line.subarray(at, at + bytes.length)))
					throw new Error("another revision");
				append(bytes);
				copied += bytes.length;
			};
			const range = { offset: 0, length };
			const from = old?.entryFor(head);
			let whole = false;
			try {
				whole = from && old ? old.readChunks(from, range, chunk, onChunk) : await texts.readChunks(head.sessionId, range, chunk, onChunk);
			} catch {
				// Another revision, or a file that cannot be read: left out (read from its own file).
			}
			if (whole && copied === length) entries.push({ sessionId: head.sessionId, revision: head.revision, offset: end, length });
			end += copied;
		}
		append(encodePackIndex(entries, end));
	});
	return entries.length;
}
