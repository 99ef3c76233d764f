/**
 * The rule of four, as plain functions: which ids make up each level of a branch, and which nodes
 * cover a branch with as few items as possible. The pipeline's `reduceLevels` plans summaries with
 * them; the query side recomputes a session's hierarchy with them. No RxJS here: a query process
 * loads this without the pipeline.
 */

/** How many consecutive nodes one summary covers, at every level. */
export const CHUNK_SIZE = 4;

/** Consecutive chunks of exactly `size`, from the start; a shorter tail is dropped (it stays unsummarized). */
export function fullChunks<T>(items: readonly T[], size = CHUNK_SIZE): T[][] {
	const out: T[][] = [];
	for (let i = 0; i + size <= items.length; i += size) out.push(items.slice(i, i + size));
	return out;
}

/**
 * The ids of each level along one branch: level 0 is the branch's Q&A, level k the summaries of
 * level k (each over four ids of level k-1), up to the first level with fewer than four items.
 */
export function branchLevels(nodeIds: readonly string[], idOf: (children: readonly string[], level: number) => string): string[][] {
	const levels: string[][] = [[...nodeIds]];
	for (let level = 1; ; level++) {
		const below = levels[level - 1] as string[];
		const chunks = fullChunks(below, CHUNK_SIZE);
		if (chunks.length === 0) break;
		levels.push(chunks.map((children) => idOf(children, level)));
	}
	return levels;
}

/**
 * The nodes that together cover a branch with as few items as possible: the top level whole,
 * then each lower level's tail that the level above leaves uncovered. These are what the session
 * root lists for the branch.
 */
export function topNodes(levels: readonly (readonly string[])[]): string[] {
	const out: string[] = [];
	for (let level = levels.length - 1; level >= 0; level--) {
		const ids = levels[level] as readonly string[];
		const covered = level + 1 < levels.length ? (levels[level + 1] as readonly string[]).length * CHUNK_SIZE : 0;
		out.push(...ids.slice(covered));
	}
	return out;
}
