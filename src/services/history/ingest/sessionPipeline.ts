import { filter, pipe, type OperatorFunction } from "rxjs";
import { buildEntryTree } from "./buildEntryTree.ts";
import { dedupeEvents } from "./dedupeEvents.ts";
import type { HistoryEvent } from "../model/events.ts";
import { groupBranches } from "./groupBranches.ts";
import { normalizeEntries } from "./normalizeEntries.ts";
import { pairTurns } from "./pairTurns.ts";
import { parseLines } from "./parseLines.ts";
import { reduceLevels } from "./reduceLevels.ts";
import { splitLines, type SplitLinesOptions } from "./splitLines.ts";
import { toHistoryEvents } from "./toHistoryEvents.ts";

export { EXTRACTION_VERSION } from "./extractionVersion.ts";

export interface SessionPipelineOptions extends SplitLinesOptions {
	/**
	 * `replay`: the source is a whole file; derive once when it completes.
	 * `live`: the source is a growing file; derive after every chunk and pass on only what changed.
	 */
	readonly mode: "replay" | "live";
	/** Session id to use when the file has no readable header (e.g. from its file name). */
	readonly fallbackSessionId?: string;
	/**
	 * `live`: while this says so, chunks are taken into the entry tree but the session is not
	 * derived (a reader feeding a long file a chunk at a time: it is derived once, after the last).
	 */
	readonly holdDerive?: () => boolean;
}

/**
 * The whole ingestion pipeline of one session file: bytes in, history events out.
 *
 *   bytes → splitLines → parseLines → normalizeEntries → buildEntryTree → pairTurns
 *         → groupBranches → reduceLevels (the rule of four, level by level) → toHistoryEvents
 */
export function sessionPipeline(options: SessionPipelineOptions): OperatorFunction<Uint8Array, HistoryEvent[]> {
	const lines = pipe(splitLines(options), parseLines(), normalizeEntries());
	const derive = pipe(
		pairTurns(options.fallbackSessionId ? { fallbackSessionId: options.fallbackSessionId } : {}),
		groupBranches(),
		reduceLevels(),
		toHistoryEvents(),
	);
	if (options.mode === "live")
		return pipe(
			lines,
			buildEntryTree(),
			filter(() => !options.holdDerive?.()),
			derive,
			dedupeEvents(),
		);
	// One derivation per file, not per chunk: the tree takes the batches as they come and gives one
	// snapshot at the end, so the rest of the file is walked once.
	return pipe(lines, buildEntryTree({ emit: "end" }), derive);
}
