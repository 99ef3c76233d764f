import { map, type OperatorFunction } from "rxjs";

/** How many consecutive nodes one summary covers, at every level. */
export const CHUNK_SIZE = 4;

/**
 * Cuts a sequence into consecutive chunks of exactly four, from its start.
 * Unlike RxJS `bufferCount(4)`, a tail of fewer than four is dropped: it stays unsummarized (and
 * fully queryable) until it grows to four. Chunks start at the branch's first node, so branches
 * that share a prefix cut it into the same chunks.
 */
export function chunkInFours<T>(): OperatorFunction<readonly T[], T[][]> {
	return map((items) => fullChunks(items));
}

export function fullChunks<T>(items: readonly T[], size = CHUNK_SIZE): T[][] {
	const out: T[][] = [];
	for (let i = 0; i + size <= items.length; i += size) out.push(items.slice(i, i + size));
	return out;
}
