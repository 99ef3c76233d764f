/**
 * Fork and clone duplicates. Pi's `/fork` and `/clone` copy the parent's entries into a new file
 * with the same native entry ids, so both archives hold the same early Q&A (under different node
 * ids, since node ids include the session id). Search shows such a Q&A once: a hit is dropped when
 * a session up its `parentSessionId` chain holds a Q&A with the same entry ids and the same parts
 * (texts, kinds, stop reasons) and that Q&A is itself a hit of the same search. The older session's
 * hit is the one kept. A fork's own Q&A — and a copied Q&A that differs, such as a question the
 * clone cut off before its answer — stay. With `sessionId` naming the fork, the parent's hits are
 * not in the result, so the fork's copies are shown. Summaries are never de-duplicated: a fork's
 * summaries cover its own node ids and are written separately.
 */
import type { SessionArchive } from "../projections/archive.ts";
import type { QueryView } from "../projections/queryView.ts";
import type { QaNode } from "../model/types.ts";

const byEntriesCache = new WeakMap<SessionArchive, Map<string, QaNode[]>>();

function entriesKey(qa: QaNode): string {
	return qa.entryIds.join("\u0000");
}

/** A session's Q&A by entry ids, built once per archive object. */
function byEntries(archive: SessionArchive): Map<string, QaNode[]> {
	let index = byEntriesCache.get(archive);
	if (!index) {
		index = new Map();
		for (const qa of Object.values(archive.nodes)) {
			const key = entriesKey(qa);
			const list = index.get(key);
			if (list) list.push(qa);
			else index.set(key, [qa]);
		}
		byEntriesCache.set(archive, index);
	}
	return index;
}

function sameContent(a: QaNode, b: QaNode): boolean {
	if (a.parts.length !== b.parts.length) return false;
	return a.parts.every((p, i) => {
		const q = b.parts[i];
		if (!q || q.kind !== p.kind || q.entryId !== p.entryId || q.text !== p.text) return false;
		return p.kind === "input" || (q.kind === "reply" && q.stopReason === p.stopReason);
	});
}

/** The copies of a Q&A in the sessions it was forked or cloned from (nearest first). */
export function ancestorCopies(view: QueryView, qa: QaNode): QaNode[] {
	const out: QaNode[] = [];
	const seen = new Set<string>([qa.sessionId]);
	let parentId = view.state.sessions[qa.sessionId]?.session.parentSessionId;
	while (parentId !== undefined && !seen.has(parentId)) {
		seen.add(parentId);
		const parent = view.state.sessions[parentId];
		if (!parent) break;
		for (const other of byEntries(parent).get(entriesKey(qa)) ?? []) if (sameContent(qa, other)) out.push(other);
		parentId = parent.session.parentSessionId;
	}
	return out;
}

/** Whether a Q&A hit is a copy of another hit in an ancestor session (and so not shown). */
export function isForkDuplicate(view: QueryView, qa: QaNode, hitIds: ReadonlySet<string>): boolean {
	if (view.state.sessions[qa.sessionId]?.session.parentSessionId === undefined) return false;
	return ancestorCopies(view, qa).some((copy) => hitIds.has(copy.id));
}
