import { watch, type FSWatcher } from "chokidar";
import ndjson from "ndjson";
import { readdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import type { Subscription } from "rxjs";
import { LiveIngest } from "../services/history/service/liveIngest.ts";
import { fileDiscovery, type DiscoveryOptions } from "../integrations/pi/history/discovery.ts";
import { tailSessionFile } from "../integrations/pi/history/tailSessionFile.ts";
import type { HistoryEvent } from "../services/history/model/events.ts";
import type { HistoryService } from "../services/history/service/historyService.ts";
import type { QaNode } from "../services/history/model/types.ts";
import { printable } from "../services/history/query/printable.ts";
import { displayWidth, truncateToWidth, wrapText } from "./format.ts";

export interface WatchOptions {
	readonly service: HistoryService;
	readonly discovery: DiscoveryOptions;
	/** Folders to watch for new session files. */
	readonly folders: readonly string[];
	readonly json: boolean;
	readonly stdout: (text: string) => void;
	readonly stderr: (text: string) => void;
	readonly signal: AbortSignal;
	/** The terminal's width now (asked at each line: it may be resized); `undefined`: whole lines. */
	readonly columns?: () => number | undefined;
}

/**
 * `pbot-history watch`: keeps the workspace's archives current while Pi runs elsewhere, and shows
 * each Q&A as it is written. Every session file of the workspace is followed with the same live
 * tail Pi uses; new session files are picked up as they appear. With `--json`, the history events
 * themselves go out as NDJSON (one event per line, through the `ndjson` package's stringifier),
 * for other tools to consume. Runs until the signal aborts (Ctrl+C).
 */
export async function watchWorkspace(options: WatchOptions): Promise<void> {
	const { service, stdout, stderr, signal } = options;
	const columns = options.columns ?? (() => undefined);
	// What changed since the last ingest (the files unchanged since are not read: a watch over a
	// 919-file history had read them all, 12.6 s before it watched).
	const report = await service.refresh({ checkArchives: true });
	for (const warning of report.warnings) stderr(`warning: ${warning}`);
	if (!options.json)
		stdout(`Archives up to date: ${report.sessions.length} session(s) read, ${report.unchangedFiles} file(s) unchanged since they were ingested.`);

	// The events as an NDJSON stream piped to stdout: each chunk is one whole line, its newline
	// included (which `stdout` keeps as it is), written in order as the events arrive.
	const out = options.json ? ndjson.stringify() : undefined;
	out?.pipe(
		new Writable({
			write(chunk: Buffer | string, _encoding, done) {
				stdout(String(chunk));
				done();
			},
		}),
	);

	const tails = new Map<string, Subscription>();
	/**
	 * The files followed, for a person (not `--json`): those seen changing or made since the watch
	 * began. A file that does not change has nothing new to show, and following every file held each
	 * one's parsed entries (1.7 GB over a 919-file history). `--json` follows every file: its output
	 * starts with each file's events (the initial replay).
	 */
	const wanted = options.json ? undefined : new Set<string>();
	/** Session files the last discovery found (what "Watching N session file(s)" counts). */
	let found = 0;
	// What is archived already is not news: following a file replays it first. (Known from the text
	// projection: no archive is read.)
	const shown = new Map<string, string>();
	for (const [id, qa] of await service.archivedQa()) shown.set(id, qaState(qa.endMs, qa.completed));
	// The live updates; their archive writes are waited for before the watch returns.
	const live = new LiveIngest(service, {
		onUpdateError: (err) => stderr(`warning: ${err.message}`),
		onTailError: (err) => stderr(`warning: a tail stopped: ${err.message}`),
	});
	// One discovery at a time; a call during one runs it once more after it (what changed meanwhile
	// is seen), however many calls came.
	let following: Promise<void> | undefined;
	let again = false;
	const follow = (): Promise<void> => {
		if (following) {
			again = true;
			return following;
		}
		following = (async () => {
			do {
				again = false;
				await discoverAndFollow();
			} while (again && !signal.aborted);
		})().finally(() => {
			following = undefined;
		});
		return following;
	};
	const discoverAndFollow = async () => {
		const { sources } = await fileDiscovery(options.discovery).discover();
		found = sources.length;
		for (const source of sources) {
			if (tails.has(source.key) || signal.aborted || (wanted !== undefined && !wanted.has(source.key))) continue;
			const tail = tailSessionFile(source.key, {
				...(source.fallbackSessionId ? { fallbackSessionId: source.fallbackSessionId } : {}),
				onError: (err) => stderr(`warning: ${source.key}: ${err.message}`),
			});
			tails.set(
				source.key,
				live.follow(tail, (events) => {
					for (const event of events) {
						if (out) out.write(event);
						else showQa(event, shown, stdout, columns);
					}
				}),
			);
		}
	};
	/**
	 * Files seen (an "add" or "change") that no discovery has followed yet, with their size at the
	 * last look. chokidar does not always report the write that follows an empty file's creation
	 * (`: > f; sleep 2; cat s > f` was missed in 2 of 3 runs), so each is looked at every
	 * `FOLDER_LOOK_MS`: grown, it is discovered again; seen with bytes and still not followed (another
	 * folder's session), or gone, it is let go.
	 */
	const unplaced = new Map<string, number>();
	const lookAtUnplaced = (): void => {
		let grown = false;
		for (const [file, size] of unplaced) {
			const now = tails.has(file) ? undefined : statSync(file, { throwIfNoEntry: false })?.size;
			if (now === undefined || (now > 0 && now === size)) unplaced.delete(file);
			else if (now !== size) {
				unplaced.set(file, now);
				if (now > 0) grown = true;
			}
		}
		if (grown && !signal.aborted) void follow();
	};
	// A folder that is not there yet (Pi makes a workspace's folder with its first session) is not
	// watched: chokidar sees nothing made under a path missing when it was added. It is looked for
	// until it appears; then a new watcher takes every folder there is, and once it is ready (its
	// first look done: a file made from then on is an "add") what the folders hold is followed.
	const missing = new Set(options.folders.filter((folder) => !isFolder(folder)));
	const watchFolders = async (folders: readonly string[]): Promise<FSWatcher> => {
		const made = watch([...folders], { ignoreInitial: true, depth: 0 });
		// A file is made empty and then written: its "add" may come before its header is there (the
		// discovery then cannot place it), so a change to a file not followed yet is looked at too,
		// and the file is kept in `unplaced` until it is followed.
		const look = (path: string) => {
			const file = resolve(path);
			if (!file.endsWith(".jsonl") || tails.has(file)) return;
			wanted?.add(file);
			if (!unplaced.has(file)) unplaced.set(file, -1);
			void follow();
		};
		made.on("add", look);
		made.on("change", look);
		// A link loop or a folder it cannot read is said; the watch goes on (without a listener,
		// chokidar's error ended the process with a stack trace).
		made.on("error", (err) => stderr(`warning: watching the session folders: ${(err as Error).message}`));
		// (A watcher given no path is never "ready".)
		if (folders.length > 0) await new Promise<void>((resolve) => made.once("ready", () => resolve()));
		return made;
	};
	let watcher = await watchFolders(options.folders.filter((folder) => !missing.has(folder)));
	let swapping: Promise<void> | undefined;
	const lookAtFolders = (): void => {
		if (swapping || signal.aborted) return;
		// A folder removed (by a person, a sync tool; perhaps made again next): its files' tails go,
		// and it is looked for as a folder not there yet (chokidar sees nothing made again under a
		// path it lost, and says nothing of a watched folder that goes).
		for (const folder of options.folders)
			if (!missing.has(folder) && !isFolder(folder)) {
				missing.add(folder);
				for (const [file, tail] of tails)
					if (dirname(file) === resolve(folder)) {
						tail.unsubscribe();
						tails.delete(file);
					}
			}
		if (missing.size === 0 || ![...missing].some(isFolder)) return;
		for (const folder of [...missing])
			if (isFolder(folder)) {
				missing.delete(folder);
				// Every file in a folder that was not there is new.
				for (const name of safeList(folder)) if (name.endsWith(".jsonl")) wanted?.add(resolve(folder, name));
			}
		swapping = (async () => {
			const before = watcher;
			watcher = await watchFolders(options.folders.filter((folder) => !missing.has(folder)));
			await before.close();
			await follow();
		})()
			.catch((err: Error) => stderr(`warning: watching the session folders: ${err.message}`))
			.finally(() => {
				swapping = undefined;
			});
	};
	// One timer for both looks. Always on: a folder can go while the watch runs (a `stat` of each
	// every half second).
	const looking = setInterval(() => {
		lookAtUnplaced();
		lookAtFolders();
	}, FOLDER_LOOK_MS);
	// A file changed before the watcher was ready would be missed: archived now (and `--json`
	// follows what is there).
	const caught = await service.refresh();
	for (const warning of caught.warnings) stderr(`warning: ${warning}`);
	await follow();
	if (!options.json) {
		const waiting = [...missing].map((folder) => `${folder} (not there yet: Pi makes it with the first session)`);
		stdout(
			wrapText(
				`Watching ${found} session file(s)${waiting.length ? `; waiting for ${waiting.join(", ")}` : ""}; new Q&A appear below. Ctrl+C stops.`,
				columns(),
			),
		);
	}
	await new Promise<void>((resolve) => {
		if (signal.aborted) resolve();
		else signal.addEventListener("abort", () => resolve(), { once: true });
	});
	clearInterval(looking);
	await swapping;
	await watcher.close();
	for (const tail of tails.values()) tail.unsubscribe();
	await live.settled();
	out?.end();
	if (out) await finished(out);
}

/** How often a session folder that is not there yet is looked for (`watchWorkspace`). */
const FOLDER_LOOK_MS = 500;

/** A folder's names; none when it cannot be listed (gone again, no permission). */
function safeList(folder: string): string[] {
	try {
		return readdirSync(folder);
	} catch {
		return [];
	}
}

function isFolder(path: string): boolean {
	return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** One line per Q&A when it first appears, and again when it changes (an open one got its answer). */
function showQa(event: HistoryEvent, shown: Map<string, string>, stdout: (text: string) => void, columns: () => number | undefined): void {
	if (event.type !== "QaObserved") return;
	const state = qaState(Date.parse(event.node.endedAt), event.node.completed);
	if (shown.get(event.node.id) === state) return;
	shown.set(event.node.id, state);
	stdout(qaLine(event.node, columns()));
}

/** What makes a Q&A news again: it grew (a later end) or was completed. */
function qaState(endMs: number, completed: boolean): string {
	return `${Number.isNaN(endMs) ? 0 : endMs}:${completed}`;
}

/**
 * A Q&A's line: when, its id (whole: `read` takes it), the question and the answer cut. With the
 * terminal's width it fits: question and answer share what the time and id leave (what one does
 * not need goes to the other), on the next line when that is too little, and on lines of their own
 * when narrower still. Without a width (a pipe), 60 columns of each.
 */
export function qaLine(qa: QaNode, columns?: number): string {
	// Session text is shown as the queries show it: a control character (an escape sequence in a
	// pasted log) is made visible, never sent to the terminal.
	const flat = (t: string) => printable(t.replace(/\s+/g, " ").trim());
	const question = flat(qa.parts.find((p) => p.kind === "input")?.text ?? "");
	const reply = [...qa.parts].reverse().find((p) => p.kind === "reply")?.text;
	const answer = reply === undefined ? undefined : flat(reply);
	const head = `${qa.endedAt.slice(0, 16).replace("T", " ")}  ${qa.id}${qa.completed ? "" : " (open)"}`;
	/** "Q: …  →  A: …" in `room` columns (each text at least `least`), or `undefined` when they do not fit. */
	const both = (room: number, least: number): string | undefined => {
		if (answer === undefined) return room - 3 >= least ? `Q: ${truncateToWidth(question, room - 3)}` : undefined;
		const texts = room - 11;
		let q = Math.floor(texts / 2);
		if (q < least) return undefined;
		q = Math.max(q, texts - displayWidth(answer));
		return `Q: ${truncateToWidth(question, q)}  →  A: ${truncateToWidth(answer, texts - Math.min(q, displayWidth(question)))}`;
	};
	if (columns === undefined) return `${head}  Q: ${truncateToWidth(question, 60)}${answer === undefined ? "" : `  →  A: ${truncateToWidth(answer, 60)}`}`;
	const beside = both(columns - displayWidth(head) - 2, 20);
	if (beside !== undefined) return `${head}  ${beside}`;
	const below = both(columns - 2, 12);
	const lines = below !== undefined ? [head, `  ${below}`] : [head, `  Q: ${question}`, ...(answer === undefined ? [] : [`  A: ${answer}`])];
	return lines.map((l) => truncateToWidth(l, columns)).join("\n");
}
