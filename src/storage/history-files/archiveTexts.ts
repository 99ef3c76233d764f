/**
 * An archive read for rebuilding its text projection: its bytes into a `TextArena`, every text
 * (a `"text"` member's string) left there as JSON, and the rest parsed and checked as any archive
 * is (`ArchiveTextsRead`). The texts are what most of an archive is, and what the projection
 * encodes back to UTF-8 anyway: decoding them into strings first was most of a rebuild's time.
 */
import type { TextArena } from "../../services/history/model/textArena.ts";
import { NO_MORE_TEXT } from "../../services/history/model/textArena.ts";
import { ReusedBuffer } from "../../services/history/model/reusedBuffer.ts";
import type { ArchiveTextsRead } from "../../services/history/projections/text/projectArchiveTexts.ts";
import { archivePath, parseArchiveJson } from "./archiveFiles.ts";
import { readRegularFile } from "./regularFile.ts";
import { revisionOf } from "./writeJsonAtomic.ts";

/** The archive with its texts replaced, rebuilt per archive; up to 16 MB is kept between reads. */
const skeletons = new ReusedBuffer(16 * 1024 * 1024);

/**
 * The archive of `sessionId` read into `arena` (`ArchiveTextsRead`), `undefined` when there is
 * none, or `"unusual"` when it is not as this project writes archives — not JSON, damaged, another
 * version, a legacy field, not the compact JSON of `JSON.stringify` (a space after a string, an escape
 * in a key: `next_text`), too large for the arena, not a regular file: the caller then reads it the usual way (`readArchiveWithRevision`), which says what it is
 * and repairs or sets it aside as it always has.
 */
export function readArchiveTexts(workspace: string, sessionId: string, arena: TextArena): ArchiveTextsRead | "unusual" | undefined {
	try {
		const read = readRegularFile(archivePath(workspace, sessionId), { into: arena });
		if (!read) return undefined;
		const end = read.bytes.length;
		const replaced = withTextsReplaced(arena, end);
		if (replaced === undefined) return "unusual";
		const parsed = parseArchiveJson(replaced.json, sessionId);
		if (parsed.legacyFields.length > 0) return "unusual";
		return { skeleton: parsed.archive, texts: replaced.texts, end, revision: revisionOf(read.stat) };
	} catch {
		return "unusual";
	}
}

/**
 * The file's JSON (the first `end` bytes of the arena) with each `"text"` member's string replaced
 * by its number (`"0"`, `"1"`, …: an index into `texts`, which holds each string's opening quote
 * and the index after its closing quote); `undefined` when `next_text` finds the bytes unusual.
 */
function withTextsReplaced(arena: TextArena, end: number): { readonly json: Buffer; readonly texts: number[] } | undefined {
	const bytes = arena.bytes;
	const texts: number[] = [];
	let out = skeletons.take(end + 256);
	let at = 0;
	let from = 0;
	const put = (start: number, stop: number, tail: string) => {
		const needed = at + (stop - start) + tail.length;
		if (needed > out.length) {
			const grown = Buffer.allocUnsafe(2 * needed);
			out.copy(grown, 0, 0, at);
			out = grown;
		}
		at += bytes.copy(out, at, start, stop);
		at += out.write(tail, at, "latin1");
	};
	for (;;) {
		const quote = arena.nextText(from, end);
		if (quote === NO_MORE_TEXT) break;
		if (quote < 0) return undefined;
		const after = arena.stringAfter(quote, end);
		if (after < 0) return undefined;
		put(from, quote, `"${texts.length / 2}"`);
		texts.push(quote, after);
		from = after;
	}
	put(from, end, "");
	return { json: out.subarray(0, at), texts };
}
