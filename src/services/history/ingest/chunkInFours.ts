import { map, type OperatorFunction } from "rxjs";
import { fullChunks } from "../model/hierarchy.ts";

export { CHUNK_SIZE, fullChunks } from "../model/hierarchy.ts";

/**
 * Cuts a sequence into consecutive chunks of exactly four, from its start.
 * Unlike RxJS `bufferCount(4)`, a tail of fewer than four is dropped: it stays unsummarized (and
 * fully queryable) until it grows to four. Chunks start at the branch's first node, so branches
 * that share a prefix cut it into the same chunks.
 */
export function chunkInFours<T>(): OperatorFunction<readonly T[], T[][]> {
	return map((items) => fullChunks(items));
}
