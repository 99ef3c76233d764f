import type { PageRequest } from "./params.ts";
import type { PageInfo } from "./types.ts";

/** One page of a list, with the paging facts every list answer carries. */
export function pageOf<T>(items: readonly T[], page: PageRequest): { items: T[]; info: PageInfo } {
	const end = Math.min(items.length, page.offset + page.limit);
	const slice = page.offset < items.length ? items.slice(page.offset, end) : [];
	// With limit 0 the answer is a count: the rest still starts at `offset`.
	const next = page.offset < items.length ? (page.limit === 0 ? page.offset : end < items.length ? end : null) : null;
	return { items: slice, info: { total: items.length, offset: page.offset, limit: page.limit, nextOffset: next, clamped: page.clamped } };
}
