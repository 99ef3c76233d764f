/**
 * Telling apart sessions that share a title (a fork and its source, a copy): what a list of hits
 * shows beside the title, the CLI's search table and Pi's hit picker alike.
 */

/**
 * For each session whose title another session among `hits` shares, the end of its id that tells
 * it apart (`…38e5`: 4 characters, more when that is not enough). The end, not the start: ids
 * begin with their time (UUIDv7), and a copy made with its source shares most of its start.
 * Sessions with a title of their own are not in the map.
 */
export function idEndsOfSharedTitles(hits: readonly { readonly sessionId: string; readonly sessionTitle: string }[]): Map<string, string> {
	const sessionsOf = new Map<string, Set<string>>();
	for (const h of hits) {
		const ids = sessionsOf.get(h.sessionTitle) ?? new Set<string>();
		ids.add(h.sessionId);
		sessionsOf.set(h.sessionTitle, ids);
	}
	const ends = new Map<string, string>();
	for (const ids of sessionsOf.values()) {
		if (ids.size < 2) continue;
		let n = 4;
		while (n < 36 && new Set([...ids].map((id) => id.slice(-n))).size < ids.size) n++;
		for (const id of ids) ends.set(id, `…${id.slice(-n)}`);
	}
	return ends;
}
