/**
 * `pbot-history sessions | search <text> | read <id>`: the same service as the tool and the slash
 * command. Flags are passed to it as given (strings); it validates them and its `QueryError`s
 * become exit code 2. `--json` prints exactly the object the service returns (the tool's
 * `details`).
 *
 * Only the commands' definitions are loaded with the CLI (`--help` lists them); the service and
 * the formatting are loaded by the action that runs.
 */
import type { Command } from "commander";
import type { ReadParams, SearchParams, SessionsParams } from "../services/history/query/index.ts";
import type { OpenService } from "./workspaceService.ts";
import { addWorkspaceOptions, type WorkspaceOptions } from "./workspaceOptions.ts";

/** What an action needs, loaded when it runs. */
async function load() {
	const [{ openFromOptions }, { emptyHistoryNote }, format] = await Promise.all([
		import("./workspaceService.ts"),
		import("./emptyHistory.ts"),
		import("./queryFormat.ts"),
	]);
	return { openFromOptions, emptyHistoryNote, ...format };
}

/** What the query commands need of the CLI's I/O. */
export interface QueryCommandIo {
	readonly stdout: (text: string) => void;
	/** Warnings (a damaged archive, a search text rebuilt): on stderr, so `--json` output stays clean. */
	readonly stderr: (text: string) => void;
	readonly cwd: string;
	readonly color: boolean;
	/** The terminal's width, which human output fits in; none: whole lines (a pipe, a file). */
	readonly columns?: number | undefined;
	/** A line of progress on a terminal (`CliIo.status`). */
	readonly status?: ((text: string | undefined) => void) | undefined;
	/** How the history is opened (`CliIo.open`); default `openFromOptions`. */
	readonly open?: OpenService | undefined;
}

/** The service parameter each flag feeds, for messages that name what the person typed. */
export const FLAG_OF_PARAMETER: Readonly<Record<string, string>> = {
	sessionId: "--session",
	from: "--from",
	to: "--to",
	offset: "--offset",
	limit: "--limit",
	childrenOffset: "--children-offset",
	query: "<text>",
	id: "<id>",
};

interface FilterFlags extends WorkspaceOptions {
	readonly session?: string;
	readonly from?: string;
	readonly to?: string;
	readonly offset?: string;
	readonly limit?: string;
	readonly json?: boolean;
}

interface ReadFlags extends WorkspaceOptions {
	readonly offset?: string;
	readonly limit?: string;
	readonly childrenOffset?: string;
	readonly json?: boolean;
}

function addFilterFlags(command: Command): Command {
	return command
		.option("--session <id>", "only this session")
		.option("--from <date>", "keep what intersects [from, to]: YYYY-MM-DD (UTC day) or an ISO date-time with Z/offset")
		.option("--to <date>", "end of the window (a date alone means the end of that UTC day)")
		.option("--offset <n>", "skip this many items (paging)")
		.option("--limit <n>", "items per page (default 20, at most 50)")
		.option("--json", "print the service's answer as JSON (what the tool returns)");
}

/** The filters given, as typed (`--session X --from Y`), or `undefined` when there are none. */
function filtersGiven(opts: FilterFlags): string | undefined {
	const given = [
		opts.session !== undefined ? `--session ${opts.session}` : "",
		opts.from !== undefined ? `--from ${opts.from}` : "",
		opts.to !== undefined ? `--to ${opts.to}` : "",
	].filter(Boolean);
	return given.length > 0 ? given.join(" ") : undefined;
}

function filterParams(opts: FilterFlags): SessionsParams {
	return {
		...(opts.session !== undefined ? { sessionId: opts.session } : {}),
		...(opts.from !== undefined ? { from: opts.from } : {}),
		...(opts.to !== undefined ? { to: opts.to } : {}),
		...(opts.offset !== undefined ? { offset: opts.offset } : {}),
		...(opts.limit !== undefined ? { limit: opts.limit } : {}),
	};
}

export function addQueryCommands(program: Command, io: QueryCommandIo): void {
	const print = (json: boolean | undefined, value: unknown, human: () => string) => io.stdout(json ? JSON.stringify(value, null, 2) : human());

	addFilterFlags(addWorkspaceOptions(program.command("sessions"), io.cwd))
		.description("list the workspace's sessions, newest first")
		.action(async (opts: FilterFlags) => {
			const loaded = await load();
			const service = (io.open ?? loaded.openFromOptions)(opts, io.cwd, io.stderr, io.status);
			const result = await service.sessions(filterParams(opts));
			for (const warning of service.takeWarnings()) io.stderr(`warning: ${warning}`);
			const note = opts.json || result.total > 0 ? "" : await loaded.emptyHistoryNote(opts, io.cwd);
			print(opts.json, result, () => loaded.formatSessions(result, { columns: io.columns, filters: filtersGiven(opts) }) + loaded.wrapText(note, io.columns));
		});

	addFilterFlags(addWorkspaceOptions(program.command("search"), io.cwd))
		.description("find Q&A and summaries containing <text> (case-insensitive, contiguous); empty text lists sessions")
		.argument("<text>", "the text to find (quote it; surrounding spaces are ignored)")
		.action(async (text: string, opts: FilterFlags) => {
			const params: SearchParams = { query: text, ...filterParams(opts) };
			const loaded = await load();
			const service = (io.open ?? loaded.openFromOptions)(opts, io.cwd, io.stderr, io.status);
			const result = await service.search(params);
			for (const warning of service.takeWarnings()) io.stderr(`warning: ${warning}`);
			const note = opts.json || result.total > 0 ? "" : await loaded.emptyHistoryNote(opts, io.cwd);
			print(
				opts.json,
				result,
				() =>
					(result.kind === "sessions"
						? loaded.formatSessions(result, { columns: io.columns, filters: filtersGiven(opts) })
						: loaded.formatSearch(result, { color: io.color, columns: io.columns, filters: filtersGiven(opts) })) + loaded.wrapText(note, io.columns),
			);
		});

	addWorkspaceOptions(program.command("read"), io.cwd)
		.description("show a node (session, summary or Q&A) with its parents and children")
		.argument("<id>", "a node id from sessions, search or a previous read")
		.option("--offset <n>", "start of the body slice, in UTF-16 code units")
		.option("--limit <n>", "length of the body slice (default 12000, at most 24000)")
		.option("--children-offset <n>", "first child to list (children come 20 at a time)")
		.option("--json", "print the service's answer as JSON (what the tool returns)")
		.action(async (id: string, opts: ReadFlags) => {
			const params: ReadParams = {
				id,
				...(opts.offset !== undefined ? { offset: opts.offset } : {}),
				...(opts.limit !== undefined ? { limit: opts.limit } : {}),
				...(opts.childrenOffset !== undefined ? { childrenOffset: opts.childrenOffset } : {}),
			};
			const { openFromOptions, formatRead } = await load();
			const service = (io.open ?? openFromOptions)(opts, io.cwd, io.stderr, io.status);
			const result = await service.read(params);
			for (const warning of service.takeWarnings()) io.stderr(`warning: ${warning}`);
			print(opts.json, result, () => formatRead(result, { columns: io.columns }));
		});
}
