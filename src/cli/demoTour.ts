/**
 * The second half of `pbot-history demo`: the main job on the bundled sessions, as a person would
 * do it with the CLI — list sessions, search for a word, read a hit, go up to its parent and down
 * to one of the parent's children.
 */
import type { HistoryService } from "../services/history/service/historyService.ts";
import { formatRead, formatSearch, formatSessions } from "./queryFormat.ts";

export interface DemoTourOptions {
	readonly workspace: string;
	readonly query: string;
	readonly color: boolean;
	/** The terminal's width (`undefined`: whole lines). */
	readonly columns?: number | undefined;
	readonly stdout: (text: string) => void;
}

/** Body characters shown per `read` in the tour, to keep it short. */
const READ_LIMIT = 600;

export async function demoTour(service: HistoryService, options: DemoTourOptions): Promise<void> {
	const { stdout, columns } = options;
	// The command line is shown whole (to be copied), its output fitted.
	const step = (command: string, output: string) => stdout(`\n$ pbot-history ${command} -w ${shellWord(options.workspace)}\n\n${output}`);

	step("sessions --limit 5", formatSessions(await service.sessions({ limit: 5 }), { columns }));

	const found = await service.search({ query: options.query, limit: 5 });
	if (found.kind !== "hits") return;
	step(`search ${shellWord(options.query)} --limit 5`, formatSearch(found, { color: options.color, columns }));
	const hit = found.groups[0]?.hits[0];
	if (!hit) return;

	const node = await service.read({ id: hit.id, limit: READ_LIMIT });
	step(`read ${hit.id} --limit ${READ_LIMIT}`, formatRead(node, { columns }));
	const parent = node.parents[0];
	if (!parent) return;

	const up = await service.read({ id: parent.id, limit: READ_LIMIT });
	step(`read ${parent.id} --limit ${READ_LIMIT}`, formatRead(up, { columns }));
	const child = up.children.find((c) => c.id !== hit.id) ?? up.children[0];
	if (!child) return;
	step(`read ${child.id} --limit ${READ_LIMIT}`, formatRead(await service.read({ id: child.id, limit: READ_LIMIT }), { columns }));
}

/** A word as a POSIX shell would need it typed. */
function shellWord(text: string): string {
	return /^[\w./@:+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
