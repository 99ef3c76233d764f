import type { PageRequest } from "./params.ts";
import type { PageInfo } from "./types.ts";

/** One page of a list, with the paging facts every list answer carries. */
export function pageOf<T>(items: readonly T[], page: PageRequest): { items: T[]; info: PageInfo } {
	const end = Math.min(items.length, page.offset + page.limit);
	const slice = page.offset < items.length ? items.slice(page.offset, end) : [];
	// With limit 0 the answer is a count, not a page: no next offset (one equal to `offset` would
	// send a client that follows it round for ever).
	const next = page.limit > 0 && end < items.length ? end : null;
	return { items: slice, info: { total: items.length, offset: page.offset, limit: page.limit, nextOffset: next, clamped: page.clamped } };
}

/** Above this many items, only the requested page is put in order (the rest is only counted). */
const SORT_ALL_BELOW = 2_000;

/**
 * The items in `compare` order as far as a page ending at `needed` requires: the first `needed`
 * in order, the rest after them unordered (they are only counted). A partial selection instead of
 * a full sort keeps a query that matches most of a million nodes cheap.
 */
export function topForPage<T>(items: T[], needed: number, compare: (a: T, b: T) => number): T[] {
	if (items.length < SORT_ALL_BELOW || needed * 4 > items.length) return items.sort(compare);
	// Keep the best `needed` in a sorted array; most items fall below its last element and are skipped.
	const best: T[] = [];
	const rest: T[] = [];
	const insert = (item: T) => insertSorted(best, item, compare);
	for (const item of items) {
		if (best.length < needed) {
			insert(item);
			continue;
		}
		if (needed === 0 || compare(item, best[best.length - 1] as T) >= 0) {
			rest.push(item);
			continue;
		}
		rest.push(best.pop() as T);
		insert(item);
	}
	return [...best, ...rest];
}

/** Inserts `item` into `sorted` (in `compare` order) after every item that does not come after it. */
export function insertSorted<T>(sorted: T[], item: T, compare: (a: T, b: T) => number): void {
	let lo = 0;
	let hi = sorted.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (compare(sorted[mid] as T, item) <= 0) lo = mid + 1;
		else hi = mid;
	}
	sorted.splice(lo, 0, item);
}
