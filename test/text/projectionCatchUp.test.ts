/**
 * The text projection is derived: whatever happens to it, a query answers as the archives say.
 * It catches up after another process wrote archives, after it was deleted or cut short, after the
 * workspace was copied; and a query made while it is being rebuilt is complete.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { FolderWatch } from "../../src/integrations/pi/history/folderWatch.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { searchHistory, type SearchParams } from "../../src/services/history/query/index.ts";
import { historyDir, textDir, writeArchive } from "../../src/storage/history-files/index.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";
import { fixtureIndex, ingestedFixtureWorkspace } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

const KEYS = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
const PROBES: SearchParams[] = [{ query: "the", limit: 50 }, { query: "version" }, { query: "README", limit: 5, offset: 2 }, { query: "é" }, {}];

function setup() {
	return ingestedFixtureWorkspace(KEYS, cleanups);
}

/** What the archives on disk say, by a plain scan of them all. */
async function expected(open: () => HistoryService, params: SearchParams): Promise<unknown> {
	const reference = open();
	await reference.load();
	return searchHistory(reference.getView(), params);
}

/** The projection files of a workspace, by name. */
async function texts(workspace: string): Promise<Map<string, string>> {
	const dir = textDir(workspace);
	return new Map(await Promise.all((await readdir(dir)).map(async (n) => [n, await readFile(join(dir, n), "latin1")] as [string, string])));
}

async function expectAnswersFromArchives(service: HistoryService, open: () => HistoryService): Promise<void> {
	for (const params of PROBES) expect(await service.search(params), JSON.stringify(params)).toEqual(await expected(open, params));
}

describe("the text projection catches up", () => {
	it("is written beside the archives, one file per archive, and is not what a query needs to load", async () => {
		const { workspace, open } = await setup();
		const archives = (await readdir(historyDir(workspace))).filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5));
		const texts = (await readdir(textDir(workspace))).filter((n) => n.endsWith(".text")).map((n) => n.replace(/\.text$/, ""));
		expect(texts.sort()).toEqual(archives.sort());
		const service = open();
		await expectAnswersFromArchives(service, open);
		expect(service.takeWarnings()).toEqual([]);
	});

	it("is made again by rebuild, in a service that has searched already: damage inside its words is gone, and nothing is said missing", async () => {
		const { workspace, open } = await setup();
		const service = open();
		await expectAnswersFromArchives(service, open);
		// Every folded text overwritten in place, separators kept: the layout holds, the words are gone.
		const dir = textDir(workspace);
		for (const name of (await readdir(dir)).filter((n) => n.endsWith(".text"))) {
			const bytes = await readFile(join(dir, name));
			const head = JSON.parse(bytes.toString("utf8", 0, bytes.indexOf(10))) as Record<string, number>;
			const text = bytes.indexOf(10) + 1 + (head.docs as number) * 64 + (head.idBytes as number) + (head.metaBytes as number);
			for (let at = text; at < text + (head.textBytes as number); at++) if (bytes[at] !== 0xff) bytes[at] = 0x78;
			await writeFile(join(dir, name), bytes);
		}
		const fresh = open();
		expect((await fresh.search({ query: "the", limit: 0 })).total).toBe(0);
		const report = await fresh.rebuild();
		expect(report.warnings.join("\n")).not.toMatch(/missing|damaged/);
		expect(fresh.takeWarnings()).toEqual([]);
		await expectAnswersFromArchives(fresh, open);
		// And for another process: every file is there again, as the archives say.
		const again = open();
		await expectAnswersFromArchives(again, open);
		expect(again.takeWarnings()).toEqual([]);
	});

	it("cannot be stored (its folder a file: as a full disk or a read-only folder fails a write): every hit counted is shown, from what was made in memory, said once", async () => {
		const { workspace, open } = await setup();
		await rm(textDir(workspace), { recursive: true });
		await writeFile(textDir(workspace), "not a folder");
		const service = open();
		await expectAnswersFromArchives(service, open);
		const said = service.takeWarnings();
		expect(said.filter((w) => w.includes("could not be stored"))).toEqual([
			expect.stringMatching(/^search text of \d+ session\(s\) could not be stored \(.*is not a folder.*\): searched from what was made in memory/),
		]);
		// Another process the same.
		await expectAnswersFromArchives(open(), open);
	});

	it("is rebuilt from the archives, with a warning, after it was deleted", async () => {
		const { workspace, open } = await setup();
		await rm(textDir(workspace), { recursive: true });
		const service = open();
		expect(await service.search({ query: "the" })).toEqual(await expected(open, { query: "the" }));
		expect(service.takeWarnings().join("\n")).toMatch(/search text rebuilt from the archives \(\d+ missing\)/);
		await expectAnswersFromArchives(service, open);
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".text")).length).toBe(
			(await readdir(historyDir(workspace))).filter((n) => n.endsWith(".json")).length,
		);
	});

	it("is made again silently while another process's rebuild, alive, remakes it (its note in the text folder), and with a warning once that process is gone", async () => {
		const { workspace, open } = await setup();
		const known = open();
		await expectAnswersFromArchives(known, open);
		// What `clear` leaves: the folder emptied, and a note naming the process that makes it again.
		const note = async (pid: number) => {
			await rm(textDir(workspace), { recursive: true });
			await mkdir(textDir(workspace));
			await writeFile(join(textDir(workspace), "remaking"), `${JSON.stringify({ pid, host: hostname() })}\n`);
		};
		const rebuilding = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
		try {
			await note(rebuilding.pid as number);
			// A new process (it knew nothing) and one that held every session's head: both answer, neither says "missing".
			for (const service of [open(), known]) {
				await expectAnswersFromArchives(service, open);
				expect(service.takeWarnings()).toEqual([]);
			}
		} finally {
			rebuilding.kill();
		}
		const ended = spawnSync(process.execPath, ["-e", "0"]).pid as number;
		await note(ended);
		const after = open();
		await expectAnswersFromArchives(after, open);
		expect(after.takeWarnings().join("\n")).toMatch(/search text rebuilt from the archives \(\d+ missing\)/);
		// The dead process's note is gone; and a rebuild's own note goes once it has made everything again.
		expect((await readdir(textDir(workspace))).includes("remaking")).toBe(false);
		await open().rebuild();
		expect((await readdir(textDir(workspace))).includes("remaking")).toBe(false);
	});

	it("is rebuilt, with a warning, when a file is cut short or is not a projection", async () => {
		const { workspace, open } = await setup();
		const [first, second] = (await readdir(textDir(workspace))).sort();
		await truncate(join(textDir(workspace), first as string), 100);
		await writeFile(join(textDir(workspace), second as string), "not a projection\n");
		const service = open();
		// Listing needs only the heads file; the first search reads the files and finds them damaged.
		expect(await service.sessions({ limit: 50 })).toEqual(await expected(open, { limit: 50 }));
		expect(await service.search({ query: "the" })).toEqual(await expected(open, { query: "the" }));
		expect(service.takeWarnings().join("\n")).toMatch(/\(2 damaged\)/);
		await expectAnswersFromArchives(service, open);
		// Made whole again on disk: the next process reads it as it is.
		const again = open();
		await expectAnswersFromArchives(again, open);
		expect(again.takeWarnings()).toEqual([]);
	});

	it("is rebuilt, with a warning, when bytes of a file were overwritten in place (its length unchanged): rows, a row's meta, a document's text", async () => {
		/** `[start, end)` of each section of a projection file, from its header line. */
		const sections = (bytes: Buffer) => {
			const header = JSON.parse(bytes.toString("utf8", 0, bytes.indexOf(10))) as Record<string, number>;
			const table = bytes.indexOf(10) + 1;
			const meta = table + (header.docs as number) * 64 + (header.idBytes as number);
			const text = meta + (header.metaBytes as number);
			return { table, meta, text, original: text + (header.textBytes as number) };
		};
		const damages: [string, (bytes: Buffer) => void][] = [
			["the middle of the file", (b) => void b.fill(0x78, 1000, b.length - 1000)],
			["the meta section", (b) => void b.fill(0x78, sections(b).meta, sections(b).text)],
			["ten bytes of the text", (b) => void b.fill(0x78, sections(b).text + 100, sections(b).text + 110)],
		];
		for (const [what, damage] of damages) {
			const { workspace, open } = await setup();
			// The largest projection: a session with many Q&A and summaries.
			const names = (await readdir(textDir(workspace))).filter((n) => n.endsWith(".text"));
			const sizes = await Promise.all(names.map(async (n) => (await stat(join(textDir(workspace), n))).size));
			const file = join(textDir(workspace), names[sizes.indexOf(Math.max(...sizes))] as string);
			const bytes = await readFile(file);
			damage(bytes);
			await writeFile(file, bytes);
			const service = open();
			// Every hit counted is shown, as the archives say; a word only the damage wrote is not found.
			const own = { query: "the", sessionId: basename(file, ".text"), limit: 50 };
			for (const params of [{ query: "xxxxxxxxxx" }, own, ...PROBES])
				expect(await service.search(params), `${what}: ${JSON.stringify(params)}`).toEqual(await expected(open, params));
			expect(service.takeWarnings().join("\n"), what).toMatch(/search text rebuilt from the archives \(1 damaged\)/);
			const again = open();
			await expectAnswersFromArchives(again, open);
			expect(again.takeWarnings(), what).toEqual([]);
		}
	});

	it("removes the projection file of a session whose archive is gone: at the query that sees it go, or at the next ingest", async () => {
		const { workspace, sessions, open } = await setup();
		const textOf = (id: string) => join(textDir(workspace), `${id}.text`);
		const names = (await readdir(sessions)).filter((n) => n.endsWith(".jsonl") && n.includes("_")).sort();
		const removeSession = async (name: string): Promise<string> => {
			const id = (JSON.parse((await readFile(join(sessions, name), "utf8")).split("\n")[0] as string) as { id: string }).id;
			await rm(join(sessions, name));
			await rm(join(historyDir(workspace), `${id}.json`));
			return id;
		};
		// The query's catch-up held the session's head (the heads file): it sees the session go.
		const first = await removeSession(names[0] as string);
		expect(await open().search({ query: "the", limit: 50 })).toEqual(await expected(open, { query: "the", limit: 50 }));
		await expect(stat(textOf(first))).rejects.toThrow();
		// Not known to the heads file (it is gone too): a search leaves the file (it reads only live
		// sessions), and the next ingest removes it.
		const second = await removeSession(names[1] as string);
		await rm(join(textDir(workspace), "heads.cache"));
		expect(await open().search({ query: "the", limit: 50 })).toEqual(await expected(open, { query: "the", limit: 50 }));
		await open().ingest();
		await expect(stat(textOf(second))).rejects.toThrow();
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".text")).length).toBe(
			(await readdir(historyDir(workspace))).filter((n) => n.endsWith(".json")).length,
		);
	});

	it("follows archives another process wrote, in a long-lived process that holds the sessions' heads (Pi)", async () => {
		const { workspace, sessions, agentDir, open } = await setup();
		const pi = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false });
		await expectAnswersFromArchives(pi, open);
		expect((await pi.search({ query: "flamingo-from-elsewhere" })).total).toBe(0);

		// Another process ingests a grown session file: archive and projection both written there.
		const name = (await readdir(sessions)).find((n) => n.endsWith(".jsonl") && n.includes("_")) as string;
		const lastId = (JSON.parse((await readFile(join(sessions, name), "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
		await appendFile(join(sessions, name), jsonl([user("zz-u1", lastId, "What about the flamingo-from-elsewhere?"), reply("zz-a1", "zz-u1", "It stays.")]));
		await open().refresh();
		expect((await pi.search({ query: "flamingo-from-elsewhere" })).total).toBe(1);

		// A writer that updates only the archive (an older pbot, a crash before the projection): caught up all the same.
		const id = (await readdir(historyDir(workspace))).find((n) => n.endsWith(".json"))?.slice(0, -5) as string;
		const archive = JSON.parse(await readFile(join(historyDir(workspace), `${id}.json`), "utf8")) as SessionArchive;
		const renamed: SessionArchive = { ...archive, session: { ...archive.session, name: "Renamed by the pelican process" } };
		await writeArchive(workspace, renamed);
		expect((await pi.sessions({ limit: 50 })).sessions.find((s) => s.sessionId === id)?.title).toBe("Renamed by the pelican process");
		expect((await pi.search({ query: "pelican process" })).total).toBe(0); // a title is not searched text
		await expectAnswersFromArchives(pi, open);
	});

	it("follows archives another process wrote in a process that keeps the text in memory (the query server), whatever it can keep", async () => {
		const { workspace, sessions, agentDir, open } = await setup();
		// All of it kept; and a budget of one small body's room, so most bodies are read from their files.
		for (const keepText of [64 << 20, 1]) {
			const server = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false, keepText });
			await server.warm({ texts: true });
			if (keepText > 1) expect(server.keptTextBytes).toBeGreaterThan(0);
			else expect(server.keptTextBytes).toBe(0);
			await expectAnswersFromArchives(server, open);
			const word = `heron-${keepText}`;
			const name = (await readdir(sessions)).find((n) => n.endsWith(".jsonl") && n.includes("_")) as string;
			const lastId = (JSON.parse((await readFile(join(sessions, name), "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
			await appendFile(
				join(sessions, name),
				jsonl([user(`kt-u${keepText}`, lastId, `What about the ${word}?`), reply(`kt-a${keepText}`, `kt-u${keepText}`, "Kept.")]),
			);
			// Another process's ingest writes the archive and the projection: the kept body of the older revision is not used.
			await open().refresh();
			expect((await server.search({ query: word })).total).toBe(1);
			await expectAnswersFromArchives(server, open);
			// The session file grown under the server itself: its own query catches up.
			await appendFile(
				join(sessions, name),
				jsonl([user(`kt-v${keepText}`, `kt-a${keepText}`, `And the ${word}-again?`), reply(`kt-b${keepText}`, `kt-v${keepText}`, "Again.")]),
			);
			expect((await server.search({ query: `${word}-again` })).total).toBe(1);
			await expectAnswersFromArchives(server, open);
		}
	});

	it("reads the session files again when the archives are deleted under a process that watches its session folders (the query server, Pi)", async () => {
		const { workspace, sessions, agentDir, open } = await setup();
		const watching = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false, keepText: 64 << 20, watch: new FolderWatch() });
		const before = await watching.sessions({ limit: 50 });
		expect(before.total).toBeGreaterThan(0);
		await watching.search({ query: "the" });
		await rm(historyDir(workspace), { recursive: true });
		// Its folder watch saw no session file change: the archives' listing says what is gone.
		expect((await watching.sessions({ limit: 50 })).total).toBe(before.total);
		await expectAnswersFromArchives(watching, open);
	});

	it("is made again, with a warning, when the text folder is deleted under a process that keeps the text in memory", async () => {
		const { workspace, sessions, agentDir, open } = await setup();
		const keeping = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false, keepText: 64 << 20, watch: new FolderWatch() });
		await keeping.warm({ texts: true });
		await expectAnswersFromArchives(keeping, open);
		keeping.takeWarnings();
		await rm(textDir(workspace), { recursive: true });
		await expectAnswersFromArchives(keeping, open);
		const archives = (await readdir(historyDir(workspace))).filter((n) => n.endsWith(".json")).length;
		expect(keeping.takeWarnings()).toEqual([`search text rebuilt from the archives (${archives} missing)`]);
		// Made again for every other process too: one that opens the workspace now finds it whole.
		const other = open();
		await expectAnswersFromArchives(other, open);
		expect(other.takeWarnings()).toEqual([]);
	});

	it("makes a new session's missing projection silently (its writer puts it right after the archive), and still warns for a known one", async () => {
		const { workspace, sessions, agentDir, open } = await setup();
		const pi = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false });
		await expectAnswersFromArchives(pi, open);
		// Another process archives a new session; its projection is not there yet when Pi's next query
		// catches up (the window between that process's archive write and its projection write).
		// (Its session file is in a folder Pi does not read: Pi learns of it from the archives alone.)
		const id = "0190eeee-0000-7000-8000-0000000000aa";
		const elsewhere = join(workspace, "elsewhere");
		await mkdir(elsewhere);
		await writeFile(
			join(elsewhere, `2026-05-01T00-00-00-000Z_${id}.jsonl`),
			jsonl([header(id), user("n-u1", null, "Where do the ibis records live?"), reply("n-a1", "n-u1", "In the green ledger.")]),
		);
		await openWorkspaceHistory({ workspace, sessionDirs: [elsewhere], agentDir, migrate: false }).refresh();
		await rm(join(textDir(workspace), `${id}.text`));
		expect((await pi.search({ query: "ibis records" })).total).toBe(1);
		expect(pi.takeWarnings()).toEqual([]);
		// A session Pi knew, its projection gone: that is worth saying.
		const known = (await readdir(textDir(workspace))).find((n) => n.endsWith(".text") && !n.startsWith(id)) as string;
		await rm(join(textDir(workspace), known));
		await expectAnswersFromArchives(pi, open);
		expect(pi.takeWarnings().join("\n")).toMatch(/search text rebuilt from the archives \(1 missing\)/);
	});

	it("answers the same in a copied workspace, rebuilding only when the copy changed the archives' revisions", async () => {
		const { workspace, open } = await setup();
		const root = await mkdtemp(join(tmpdir(), "pbot-copies-"));
		cleanups.push(root);
		const original = open();
		const answers = await Promise.all(PROBES.map((p) => original.search(p)));
		for (const [dir, preserve] of [
			[join(root, "copy-plain"), false],
			[join(root, "copy-preserving"), true],
		] as const) {
			// `cp -a` keeps modification times to the nanosecond (Node's `fs.cp` rounds them).
			if (preserve) {
				await mkdir(dir, { recursive: true });
				execFileSync("cp", ["-a", join(workspace, ".pi"), join(dir, ".pi")]);
			} else await cp(join(workspace, ".pi"), join(dir, ".pi"), { recursive: true });
			const before = await texts(dir);
			const copy = openWorkspaceHistory({ workspace: dir, sessionDirs: [join(dir, "no-sessions-here")], agentDir: join(root, "agent"), migrate: false });
			for (const [i, p] of PROBES.entries()) {
				expect(await copy.search(p)).toEqual(answers[i]);
				// Behind (the copy gave the archives new times) is caught up silently; nothing was missing or damaged.
				expect(copy.takeWarnings()).toEqual([`session folder ${join(dir, "no-sessions-here")} does not exist: no session read from it`]);
			}
			const after = await texts(dir);
			if (preserve) expect(after).toEqual(before);
			else for (const [name, text] of after) expect(text, name).not.toEqual(before.get(name));
		}
	});

	it("lists sessions in a new process from the heads file alone; a damaged or stale heads file changes no answer", async () => {
		const { workspace, sessions, open } = await setup();
		const want = await expected(open, { limit: 50 });
		await open().sessions({ limit: 50 }); // writes the heads file
		const heads = join(textDir(workspace), "heads.cache");
		// With the heads file, listing needs no projection file: moved away, nothing is missing.
		const aside = `${textDir(workspace)}-aside`;
		await cp(textDir(workspace), aside, { recursive: true });
		for (const name of await readdir(textDir(workspace))) if (name.endsWith(".text")) await rm(join(textDir(workspace), name));
		const lister = open();
		expect(await lister.sessions({ limit: 50 })).toEqual(want);
		expect(lister.takeWarnings()).toEqual([]);
		// Finding a node needs every session's ids: the heads file's second part gives them, still no projection file.
		const hit = ((await open().search({ query: "the", limit: 1 })) as unknown as { groups: { hits: { id: string }[] }[] }).groups[0]?.hits[0]?.id;
		const summaryOrQa = hit as string;
		await rm(textDir(workspace), { recursive: true });
		await cp(aside, textDir(workspace), { recursive: true });
		for (const name of await readdir(textDir(workspace))) if (name.endsWith(".text")) await rm(join(textDir(workspace), name));
		const reader = open();
		const read = await reader.read({ id: summaryOrQa });
		expect(reader.takeWarnings()).toEqual([]);
		// Nothing was made again: the ids came from the heads file.
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".text"))).toEqual([]);
		expect(read).toEqual(await open().read({ id: summaryOrQa }));
		// A session's own id too: found among the heads file's sessions, with no catch-up.
		const sessionId = (want as { sessions: { sessionId: string }[] }).sessions[0]?.sessionId as string;
		const sessionReader = open();
		expect((await sessionReader.read({ id: sessionId })).id).toBe(sessionId);
		expect(sessionReader.takeWarnings()).toEqual([]);
		// The reader then lists every session: its catch-up reads the rest of the heads file (`read`
		// parsed only the sessions that might hold the node), so no projection file is made again and,
		// nothing having changed, the heads file is left as it was.
		const headsBefore = await readFile(heads);
		const headsTime = (await stat(heads)).mtimeMs;
		expect(await reader.sessions({ limit: 50 })).toEqual(want);
		expect(reader.takeWarnings()).toEqual([]);
		expect((await readdir(textDir(workspace))).filter((n) => n.endsWith(".text"))).toEqual([]);
		expect(await readFile(heads)).toEqual(headsBefore);
		expect((await stat(heads)).mtimeMs).toBe(headsTime);
		await rm(textDir(workspace), { recursive: true });
		await cp(aside, textDir(workspace), { recursive: true });

		// Damaged: ignored. Stale (another process changed a session since): that session is read again.
		await writeFile(heads, "garbage");
		expect(await open().sessions({ limit: 50 })).toEqual(want);
		const name = (await readdir(sessions)).find((n) => n.endsWith(".jsonl") && n.includes("_")) as string;
		const lastId = (JSON.parse((await readFile(join(sessions, name), "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
		const staleHeads = await readFile(heads);
		await appendFile(join(sessions, name), jsonl([user("hc-u1", lastId, "One more question"), reply("hc-a1", "hc-u1", "One more answer")]));
		await open().refresh();
		expect(await open().sessions({ limit: 50 })).toEqual(await expected(open, { limit: 50 }));
		const found = await open().search({ query: "one more answer" });
		expect(found).toEqual(await expected(open, { query: "one more answer" }));
		// A heads file from before that Q&A: reading it finds it all the same (the file is only a first guess).
		const newId = (found as unknown as { groups: { hits: { id: string }[] }[] }).groups[0]?.hits[0]?.id as string;
		await writeFile(heads, staleHeads);
		const late = await open().read({ id: newId });
		expect(late.id).toBe(newId);
		expect(late).toEqual(await open().read({ id: newId }));
	});

	it("leaves the heads file as it is when a few sessions changed, for a query; an ingest writes it again", async () => {
		const { workspace, sessions, open } = await setup();
		const heads = join(textDir(workspace), "heads.cache");
		const headsBefore = await readFile(heads);
		const name = (await readdir(sessions)).filter((n) => n.endsWith(".jsonl") && n.includes("_")).sort()[0] as string;
		const lastId = (JSON.parse((await readFile(join(sessions, name), "utf8")).trim().split("\n").at(-1) as string) as { id: string }).id;
		await appendFile(join(sessions, name), jsonl([user("hf-u1", lastId, "What about the kestrel-in-the-heads?"), reply("hf-a1", "hf-u1", "Kept.")]));
		await open().refresh();
		// One session of many differs: a query reads its head from its file, and does not write 5.8 MB
		// (on the bench's history) to say so.
		const service = open();
		expect(await service.search({ query: "kestrel-in-the-heads" })).toEqual(await expected(open, { query: "kestrel-in-the-heads" }));
		expect(await service.sessions({ limit: 50 })).toEqual(await expected(open, { limit: 50 }));
		expect(await open().sessions({ limit: 50 })).toEqual(await expected(open, { limit: 50 }));
		expect(await readFile(heads)).toEqual(headsBefore);
		await open().ingest();
		expect(await readFile(heads)).not.toEqual(headsBefore);
	});

	it("gives a query made while it is being rebuilt the whole answer", async () => {
		const { workspace, open } = await setup();
		await rm(textDir(workspace), { recursive: true });
		const service = open();
		const results = await Promise.all([
			service.search(PROBES[0] as SearchParams),
			service.sessions({ limit: 50 }),
			service.search(PROBES[0] as SearchParams),
			open().search(PROBES[0] as SearchParams),
		]);
		const want = await expected(open, PROBES[0] as SearchParams);
		expect(results[0]).toEqual(want);
		expect(results[2]).toEqual(want);
		expect(results[3]).toEqual(want);
		expect(results[1]).toEqual(await expected(open, { limit: 50 }));
	});
});
