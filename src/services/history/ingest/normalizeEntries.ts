import { Observable, type OperatorFunction } from "rxjs";
import type { EntryLite, ParsedLine } from "./sessionEntry.ts";

/**
 * Brings legacy session files to the current shape, in memory and deterministically.
 *
 * Version 1 entries have no `id`/`parentId`: Pi's own migration gives them random ids (and
 * `SessionManager.open` rewrites the file), so the same file would get new node ids on every
 * read. Here a v1 entry's id is `v1-<line number>` and its parent is the entry before it, so
 * reading the file twice, or on another machine, gives the same ids. Version 2's `hookMessage`
 * role is already read as `custom` by the parser.
 *
 * Also rejects what the tree cannot use: a second header, or a v2+ entry without an id.
 */
export function normalizeEntries(): OperatorFunction<ParsedLine[], ParsedLine[]> {
	return (source) =>
		new Observable<ParsedLine[]>((subscriber) => {
			let version: number | undefined;
			let headerSeen = false;
			let previousId: string | null = null;

			return source.subscribe({
				next(batch) {
					const out: ParsedLine[] = [];
					for (const item of batch) {
						if (item.kind === "header") {
							if (headerSeen) {
								out.push({ kind: "rejected", line: item.header.line, reason: "a second session header" });
								continue;
							}
							headerSeen = true;
							version = item.header.version;
							out.push(item);
							continue;
						}
						if (item.kind !== "entry") {
							out.push(item);
							continue;
						}
						const entry = item.entry;
						// Without a header, a file whose entries carry ids is read as current.
						version ??= entry.id === undefined ? 1 : 3;
						if (version < 2) {
							const id = entry.id ?? `v1-${entry.line}`;
							const upgraded: EntryLite = entry.id === undefined ? { ...entry, id, parentId: previousId } : { ...entry, id };
							previousId = id;
							out.push({ kind: "entry", entry: upgraded });
							continue;
						}
						if (entry.id === undefined) {
							out.push({ kind: "rejected", line: entry.line, reason: `entry of type "${entry.type}" without an id` });
							continue;
						}
						previousId = entry.id;
						out.push(item);
					}
					subscriber.next(out);
				},
				error: (err) => subscriber.error(err),
				complete: () => subscriber.complete(),
			});
		});
}
