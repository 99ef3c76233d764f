/**
 * The crash loop: a pbot child process ingesting (or summarizing) a workspace is killed with
 * SIGKILL at random moments, again and again, and restarted. After every kill every archive must
 * parse, and nothing that was in an archive before may be missing after; at the end, a run to
 * completion must give exactly the archives a clean run gives. The CI test runs a few kills, the
 * bench script (`bench/crash-loop.ts`) hundreds.
 */
import { statSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastValueFrom, of } from "rxjs";
import { fileDiscovery } from "../../src/integrations/pi/history/discovery.ts";
import { applyArchiveEvents, initialArchiveState, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import { deepEqual } from "../../src/services/history/model/deepEqual.ts";
import { HistoryService } from "../../src/services/history/service/historyService.ts";
import { sessionPipeline } from "../../src/services/history/ingest/sessionPipeline.ts";
import { runSummaryPass } from "../../src/services/history/summaries/summaryWorker.ts";
import { finishSessionText, projectSessionText } from "../../src/services/history/projections/text/projectSessionText.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { TextPack } from "../../src/services/history/projections/text/textPack.ts";
import {
	historyDir,
	memoryArchiveStore,
	parseArchive,
	revisionOf,
	textDir,
	workspaceArchiveStore,
	workspaceTextStore,
} from "../../src/storage/history-files/index.ts";
import { FIXTURES_DIR } from "../helpers/fixtures.ts";
import { fauxSummaryModel, PINNED_NOW } from "./children/shared.ts";
import { exited, lineFrom, spawnChild } from "./children/spawn.ts";
import { prng, type Random } from "./fuzz/mutations.ts";

export interface CrashLoopOptions {
	/** `ingest`: the child ingests growing session files. `summarize`: the child runs the summary worker. */
	readonly mode: "ingest" | "summarize";
	/** Children killed. */
	readonly kills: number;
	readonly seed?: number;
	/** Progress lines, for the bench script. */
	readonly log?: (line: string) => void;
}

export interface CrashLoopResult {
	readonly mode: CrashLoopOptions["mode"];
	/** SIGKILLs sent to a child that had loaded and not finished. */
	readonly kills: number;
	/** Kills after which a new temporary or lock file was left: the child died inside a write. */
	readonly killsInsideWrites: number;
	/** Children that finished before their kill came (their round counts no kill). */
	readonly finishedFirst: number;
	/** Archive files read and checked after kills. */
	readonly archivesChecked: number;
	/** Archive files that did not parse (must be 0). */
	readonly unreadable: number;
	/** Closed Q&A, open Q&A still current, and ready summaries present before a kill and missing after (must be 0). */
	readonly nodesLost: number;
	readonly summariesLost: number;
	/** The archives after a final run to completion equal those of a clean run (must be true). */
	readonly finalMatchesClean: boolean;
	/** Text projection files read after kills, and how many were torn or unreadable (must be 0). */
	readonly projectionsChecked: number;
	readonly projectionsTorn: number;
	/** After the final run and one query, every projection is its archive's, at its revision (must be true). */
	readonly projectionMatches: boolean;
	/** Summaries ready at the end (summarize) or Q&A archived (ingest): the amount of work done. */
	readonly finalCount: number;
	readonly problems: readonly string[];
}

/** A session file the loop lets grow: all its lines, and how many are on disk. */
interface GrowingSession {
	readonly file: string;
	readonly lines: readonly string[];
	written: number;
}

const FIXTURE_NAMES = async () => (await readdir(FIXTURES_DIR)).filter((n) => /^\d{4}-.*_[0-9a-f-]+\.jsonl$/.test(n)).sort();

/** A fixture under a new session id (the last 12 hex digits replaced), as lines. */
async function copyOf(name: string, copy: number): Promise<{ sessionId: string; fileName: string; lines: string[] }> {
	const lines = (await readFile(join(FIXTURES_DIR, name), "utf8")).split("\n").filter((l) => l !== "");
	const header = JSON.parse(lines[0] as string) as { id: string };
	const sessionId = `${header.id.slice(0, -12)}${copy.toString(16).padStart(12, "0")}`;
	lines[0] = JSON.stringify({ ...header, id: sessionId });
	return { sessionId, fileName: name.replace(header.id, sessionId), lines };
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every archive of a workspace, parsed; unparseable ones are counted. */
async function readArchives(workspace: string): Promise<{ archives: Map<string, SessionArchive>; unreadable: string[]; leftovers: string[] }> {
	const dir = historyDir(workspace);
	const archives = new Map<string, SessionArchive>();
	const unreadable: string[] = [];
	let names: string[] = [];
	try {
		names = await readdir(dir);
	} catch {
		return { archives, unreadable, leftovers: [] };
	}
	for (const name of names.filter((n) => n.endsWith(".json") && !n.startsWith("."))) {
		const id = name.slice(0, -5);
		try {
			archives.set(id, parseArchive(await readFile(join(dir, name), "utf8"), id));
		} catch (err) {
			unreadable.push(`${name}: ${(err as Error).message}`);
		}
	}
	return { archives, unreadable, leftovers: names.filter((n) => !n.endsWith(".json")) };
}

/** Every text projection file, read whole: a torn one (not whole, not parseable) is a problem. */
async function readTexts(workspace: string): Promise<{ checked: number; torn: string[]; leftovers: string[] }> {
	const dir = textDir(workspace);
	let names: string[] = [];
	try {
		names = await readdir(dir);
	} catch {
		return { checked: 0, torn: [], leftovers: [] };
	}
	const torn: string[] = [];
	const files = names.filter((n) => n.endsWith(".text") && !n.startsWith("."));
	for (const name of files) {
		try {
			SessionText.parse(await readFile(join(dir, name)), name.slice(0, -".text".length), "whole");
		} catch (err) {
			torn.push(`projection ${name}: ${(err as Error).message}`);
		}
	}
	// The pack, when there is one, is whole too (it is replaced by a rename).
	if (names.includes("pack.cache")) {
		const pack = await openPack(workspace);
		if (pack) pack.close();
		else torn.push("the text pack cannot be read");
	}
	return {
		checked: files.length + (names.includes("pack.cache") ? 1 : 0),
		torn,
		leftovers: names.filter((n) => !n.endsWith(".text") && !n.endsWith(".cache")),
	};
}

async function openPack(workspace: string): Promise<TextPack | undefined> {
	const file = await workspaceTextStore(workspace).openPack?.();
	return file && TextPack.open(file);
}

/** The archive a clean ingest of one native file gives (for telling a superseded open Q&A from a lost one). */
async function cleanArchiveOf(file: string): Promise<SessionArchive | undefined> {
	const events = await lastValueFrom(of(new Uint8Array(await readFile(file))).pipe(sessionPipeline({ mode: "replay" })));
	return Object.values(applyArchiveEvents(initialArchiveState(), events).sessions)[0];
}

/** Runs a child to completion (no kill). */
async function runToEnd(script: string, args: string[]): Promise<void> {
	const child = spawnChild(script, args);
	const { code } = await exited(child);
	if (code !== 0) throw new Error(`child ${script} failed: ${child.stderrText()}`);
}

export async function crashLoop(options: CrashLoopOptions): Promise<CrashLoopResult> {
	const random: Random = prng(options.seed ?? 20_260_401);
	const log = options.log ?? (() => undefined);
	const root = await mkdtemp(join(tmpdir(), `pbot-crash-${options.mode}-`));
	const workspace = join(root, "workspace");
	const natives = join(root, "natives");
	await mkdir(natives, { recursive: true });
	await mkdir(workspace, { recursive: true });
	const names = await FIXTURE_NAMES();
	const sessions: GrowingSession[] = [];
	const problems: string[] = [];
	let copies = 0;

	/** Adds a copy of every fixture; in ingest mode each starts as a random prefix of its lines. */
	const addCopies = async (partial: boolean) => {
		copies++;
		for (const name of names) {
			const { fileName, lines } = await copyOf(name, copies);
			const session: GrowingSession = { file: join(natives, fileName), lines, written: partial ? 1 + Math.floor(random() * lines.length) : lines.length };
			sessions.push(session);
			await writeFile(session.file, `${lines.slice(0, session.written).join("\n")}\n`);
		}
	};
	/** Appends whole lines to a few sessions that are not complete yet. */
	const grow = async () => {
		const open = sessions.filter((s) => s.written < s.lines.length);
		for (let k = 0; k < 6 && open.length > 0; k++) {
			const s = open.splice(Math.floor(random() * open.length), 1)[0] as GrowingSession;
			const more = 1 + Math.floor(random() * 8);
			const next = Math.min(s.lines.length, s.written + more);
			await writeFile(s.file, `${s.lines.slice(0, next).join("\n")}\n`);
			s.written = next;
		}
	};
	/** Summarize mode: new sessions to summarize, ingested by this process while no child runs. */
	const ingestHere = async () => {
		await new HistoryService({ store: workspaceArchiveStore(workspace), discovery: fileDiscovery({ workspace, sessionDirs: [natives] }) }).ingest();
	};
	const pendingCount = (archives: Map<string, SessionArchive>) =>
		[...archives.values()].reduce((n, a) => n + Object.values(a.summaries).filter((s) => s.status !== "ready").length, 0);

	if (options.mode === "ingest") await addCopies(true);
	else {
		await addCopies(false);
		await addCopies(false);
		await ingestHere();
	}

	const [script, args] = options.mode === "ingest" ? ["ingestChild.ts", [workspace, natives]] : ["summarizeChild.ts", ["summarize", workspace]];
	let window = 150; // ms of work after "ready", re-estimated from children that finish
	let kills = 0;
	let killsInsideWrites = 0;
	let finishedFirst = 0;
	let archivesChecked = 0;
	let unreadable = 0;
	let projectionsChecked = 0;
	let projectionsTorn = 0;
	let nodesLost = 0;
	let summariesLost = 0;
	let before = (await readArchives(workspace)).archives;
	let leftoversBefore = new Set<string>();

	for (let round = 0; kills < options.kills; round++) {
		if (options.mode === "ingest") {
			// New sessions when few are still growing: the workspace grows with the work, not with the kills.
			if (sessions.filter((s) => s.written < s.lines.length).length < 6) await addCopies(true);
			await grow();
		} else if (pendingCount(before) < 20) {
			await addCopies(false);
			await ingestHere();
			before = (await readArchives(workspace)).archives;
		}
		const child = spawnChild(script, args);
		const done = lineFrom(child, "done").then(
			() => true,
			() => false,
		);
		try {
			await lineFrom(child, "ready");
		} catch {
			problems.push(`child did not start: ${child.stderrText().slice(0, 500)}`);
			break;
		}
		// Half the kills at a random moment of the run, half a moment after a write has started.
		const started = performance.now();
		const aimed = round % 2 === 1;
		const moment = aimed
			? lineFrom(child, "write", 1 + Math.floor(random() * 4)).then(
					() => sleep(random() * 3),
					() => undefined,
				)
			: sleep(random() * window);
		const finished = await Promise.race([done, moment.then(() => false)]);
		if (finished) {
			finishedFirst++;
			if (!aimed) window = Math.max(20, 0.7 * window + 0.3 * (performance.now() - started));
		} else {
			child.kill("SIGKILL");
			kills++;
			if (!aimed) window *= 1.1; // the work may have grown: reach further into it next time
		}
		const { code, signal } = await exited(child);
		if (!finished && signal !== "SIGKILL" && code !== 0) problems.push(`child failed: ${child.stderrText().slice(0, 500)}`);

		const after = await readArchives(workspace);
		const texts = await readTexts(workspace);
		projectionsChecked += texts.checked;
		projectionsTorn += texts.torn.length;
		problems.push(...texts.torn.map((t) => `round ${round}: ${t}`));
		const leftovers = [...after.leftovers, ...texts.leftovers].filter((n) => n.endsWith(".tmp") || n.endsWith(".lock"));
		if (!finished && leftovers.some((n) => !leftoversBefore.has(n))) killsInsideWrites++;
		leftoversBefore = new Set(leftovers);
		archivesChecked += after.archives.size + after.unreadable.length;
		unreadable += after.unreadable.length;
		problems.push(...after.unreadable);
		const lost = await compare(before, after.archives, sessions);
		nodesLost += lost.nodes.length;
		summariesLost += lost.summaries.length;
		problems.push(...lost.nodes.map((id) => `round ${round}: Q&A ${id} lost`), ...lost.summaries.map((id) => `round ${round}: summary ${id} lost`));
		before = after.archives;
		if (kills % 25 === 0 && !finished)
			log(`${options.mode}: ${kills} kills, ${archivesChecked} archives checked, ${nodesLost} nodes and ${summariesLost} summaries lost`);
	}

	// A run to completion, then the same from scratch in a fresh workspace: they must be equal.
	await runToEnd(script, args);
	const final = await readArchives(workspace);
	const clean = join(root, "clean");
	await mkdir(clean, { recursive: true });
	const cleanService = new HistoryService({ store: memoryArchiveStore(), discovery: fileDiscovery({ workspace: clean, sessionDirs: [natives] }) });
	await cleanService.ingest();
	await cleanService.load();
	if (options.mode === "summarize") {
		const target = {
			state: () => cleanService.archiveState(),
			applyEvents: (e: Parameters<typeof cleanService.applyEvents>[0]) => cleanService.applyEvents(e),
		};
		await runSummaryPass(target, fauxSummaryModel("clean"), new AbortController().signal, { now: () => PINNED_NOW, maxAttemptsPerSummary: 1 });
	}
	const expected = cleanService.archiveState().sessions;
	let finalMatchesClean = final.unreadable.length === 0 && final.archives.size === Object.keys(expected).length;
	for (const [id, archive] of final.archives) {
		if (!deepEqual(archive, expected[id])) {
			finalMatchesClean = false;
			problems.push(`final archive ${id} differs from a clean run`);
		}
	}
	// One query catches the projection up (a kill may have come between an archive write and its
	// projection's); then every projection must be exactly its archive's, at its revision.
	await new HistoryService({
		store: workspaceArchiveStore(workspace),
		text: workspaceTextStore(workspace),
		discovery: fileDiscovery({ workspace, sessionDirs: [natives] }),
	}).sessions();
	let projectionMatches = true;
	const pack = await openPack(workspace);
	if (!pack && options.mode === "ingest") {
		projectionMatches = false;
		problems.push("no text pack after the final ingest");
	}
	// Copy keys are made for sessions in a fork chain: with a parent, or named as one.
	const forkParents = new Set([...final.archives.values()].map((a) => a.session.parentSessionId));
	for (const [id, archive] of final.archives) {
		const stat = statSync(join(historyDir(workspace), `${id}.json`));
		const copyKeys = archive.session.parentSessionId !== undefined || forkParents.has(id);
		const want = finishSessionText(projectSessionText(archive, { copyKeys }), revisionOf(stat));
		// Its own file, or (a packed session has none) its entry in the pack: whole, the same bytes.
		const text = SessionText.parse(want, id, "whole");
		const entry = pack?.entryFor(text);
		const have = (await readFile(join(textDir(workspace), `${id}.text`)).catch(() => undefined)) ?? (entry && pack?.read(entry, 0, entry.length));
		if (!have || !want.equals(have)) {
			projectionMatches = false;
			problems.push(`final projection of ${id} does not match its archive`);
		}
		if (entry && !pack?.read(entry, 0, entry.length)?.equals(want)) {
			projectionMatches = false;
			problems.push(`the text pack's entry of ${id} does not match its archive`);
		}
	}
	pack?.close();
	const finalCount =
		options.mode === "summarize"
			? [...final.archives.values()].reduce((n, a) => n + Object.values(a.summaries).filter((s) => s.status === "ready").length, 0)
			: [...final.archives.values()].reduce((n, a) => n + Object.keys(a.nodes).length, 0);
	await rm(root, { recursive: true, force: true, maxRetries: 3 });
	return {
		mode: options.mode,
		kills,
		killsInsideWrites,
		finishedFirst,
		archivesChecked,
		unreadable,
		nodesLost,
		summariesLost,
		finalMatchesClean,
		projectionsChecked,
		projectionsTorn,
		projectionMatches,
		finalCount,
		problems,
	};
}

/**
 * What was in the archives before a kill and is missing after: any closed Q&A, any ready summary
 * (missing or no longer ready), and any open Q&A that a clean reading of the current native file
 * still has (an open Q&A may be superseded when its file grows: that is not a loss).
 */
async function compare(
	before: Map<string, SessionArchive>,
	after: Map<string, SessionArchive>,
	sessions: readonly GrowingSession[],
): Promise<{ nodes: string[]; summaries: string[] }> {
	const nodes: string[] = [];
	const summaries: string[] = [];
	for (const [id, old] of before) {
		const now = after.get(id);
		for (const [nodeId, node] of Object.entries(old.nodes)) {
			if (now?.nodes[nodeId]) continue;
			if (!node.completed) {
				const file = sessions.find((s) => s.file.includes(id))?.file;
				const current = file ? await cleanArchiveOf(file) : undefined;
				if (!current?.nodes[nodeId]) continue;
			}
			nodes.push(nodeId);
		}
		for (const [summaryId, summary] of Object.entries(old.summaries)) {
			if (summary.status === "ready" && now?.summaries[summaryId]?.status !== "ready") summaries.push(summaryId);
		}
	}
	return { nodes, summaries };
}
