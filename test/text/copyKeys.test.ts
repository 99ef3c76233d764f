/**
 * Copy keys (fork de-duplication) are made only for the sessions of fork chains: a session with a
 * parent, and a session another one names as its parent. A session becomes a parent after its
 * projection was made (its first fork comes later, perhaps from another process): it is made again
 * with keys before a search visits it, so that search already shows each copied Q&A once.
 */
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { TextProjection } from "../../src/services/history/projections/text/textProjection.ts";
import { searchHistory, type SearchParams } from "../../src/services/history/query/index.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { workspaceArchiveStore, workspaceTextStore } from "../../src/storage/history-files/index.ts";
import { FIXTURES_DIR, fixtureFile, fixtureIndex, fixtureSessionId, fixtureWorkspace } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

const CHILDREN = ["fork", "clone-at-user"];
const PARENT = "fork-source";
const KEYS = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
/** Words of the fork source's Q&A, which its fork and its clone copy. */
const PROBES: SearchParams[] = [
	{ query: "VERSION" },
	{ query: "1.4.2" },
	{ query: "changelog", limit: 50 },
	{ query: "the", limit: 50 },
	{ query: "bump", limit: 3, offset: 1 },
];

function open(ws: { workspace: string; sessions: string; agentDir: string }): HistoryService {
	return openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir, migrate: false });
}

/** Every session's projection head as the files say, read by a projection of its own (a new process). */
async function heads(workspace: string): Promise<Map<string, SessionText>> {
	const projection = new TextProjection({ archives: workspaceArchiveStore(workspace), texts: workspaceTextStore(workspace), warn: () => undefined });
	const found = new Map<string, SessionText>();
	await projection.scan(
		(text, head) => found.set(text.sessionId, head),
		undefined,
		async () => undefined,
	);
	return found;
}

/** What a plain scan of every archive answers (fork copies shown once, in the oldest session). */
async function expected(service: HistoryService, params: SearchParams): Promise<unknown> {
	await service.load();
	return searchHistory(service.getView(), params);
}

describe("copy keys", () => {
	it("are made for the sessions of fork chains only", async () => {
		const ws = await fixtureWorkspace(KEYS);
		cleanups.push(ws.workspace);
		await open(ws).ingest();
		const found = await heads(ws.workspace);
		const chain = new Set([PARENT, ...CHILDREN].map(fixtureSessionId));
		expect(found.size).toBeGreaterThan(10);
		for (const [id, head] of found) {
			expect({ id, keys: head.hasCopyKeys }).toEqual({ id, keys: chain.has(id) });
			const qa = Array.from({ length: head.docs }, (_, row) => row).filter((row) => head.level(row) === 0);
			expect(qa.length).toBeGreaterThan(0);
			for (const row of qa) expect(head.copyKeyBytes(row) !== undefined).toBe(chain.has(id));
		}
		// A fork's copied Q&A has the key of its original in the parent.
		const keysOf = (id: string) => {
			const head = found.get(id) as SessionText;
			return new Set(Array.from({ length: head.docs }, (_, row) => head.copyKey(row)).filter((k) => k !== undefined));
		};
		const parentKeys = keysOf(fixtureSessionId(PARENT));
		expect([...keysOf(fixtureSessionId("fork"))].filter((k) => parentKeys.has(k)).length).toBeGreaterThan(0);
	});

	it("are made for a session once a fork of it appears, before a search visits it, when another process ingested the fork", async () => {
		const ws = await fixtureWorkspace(KEYS.filter((k) => !CHILDREN.includes(k)));
		cleanups.push(ws.workspace);
		await open(ws).ingest();
		// A process that searched (it holds every session's head), while the source had no fork.
		const pi = open(ws);
		for (const params of PROBES) expect(await pi.search(params)).toEqual(await expected(open(ws), params));
		expect((await heads(ws.workspace)).get(fixtureSessionId(PARENT))?.hasCopyKeys).toBe(false);
		// Another process ingests a fork and a clone of it, from a folder the first does not look at:
		// the first learns of them from their archives alone.
		const more = join(ws.workspace, "more-sessions");
		await mkdir(more);
		for (const key of CHILDREN) await cp(join(FIXTURES_DIR, fixtureFile(key)), join(more, fixtureFile(key)));
		await openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions, more], agentDir: ws.agentDir, migrate: false }).ingest();
		// The first search after it hides their copies, in that process and in a new one.
		let copies = 0;
		for (const params of PROBES) {
			const want = (await expected(open(ws), params)) as { total: number };
			expect(await pi.search(params)).toEqual(want);
			expect(await open(ws).search(params)).toEqual(want);
			// (Without de-duplication, the fork's and the clone's copies would count too.)
			const all = (await expected(open(ws), { ...params, sessionId: fixtureSessionId("fork") })) as { total: number };
			copies += all.total;
		}
		expect(copies).toBeGreaterThan(0);
		expect((await heads(ws.workspace)).get(fixtureSessionId(PARENT))?.hasCopyKeys).toBe(true);
		expect(pi.takeWarnings()).toEqual([]);
	});
	it("hide a copy found through a session of the chain that has no hit (a new process's search reads nothing more of that one)", async () => {
		// The clone stops at the source's third question, unanswered: the answer's words are not in it.
		const ws = await fixtureWorkspace([PARENT, "clone-at-user"]);
		cleanups.push(ws.workspace);
		// A session forked from the clone that holds the source's whole conversation (a file carried in
		// by hand: Pi would fork the clone's entries): its copy of the answer is the source's, two links up.
		const id = "019cdd49-b680-7000-8000-00000000c0de";
		const source = await readFile(join(FIXTURES_DIR, fixtureFile(PARENT)), "utf8");
		const [header, ...lines] = source.split("\n");
		const head = JSON.parse(header as string) as Record<string, unknown>;
		const forked = { ...head, id, timestamp: "2026-03-12T09:00:00.001Z", parentSession: `/elsewhere/${fixtureFile("clone-at-user")}` };
		await writeFile(join(ws.sessions, `2026-03-12T09-00-00-001Z_${id}.jsonl`), [JSON.stringify(forked), ...lines].join("\n"));
		await open(ws).ingest();
		const params = { query: "CHANGELOG.md" };
		const want = (await expected(open(ws), params)) as { total: number };
		// Shown once, in the source: the clone has no hit, the new session's is a copy.
		expect(want.total).toBe(1);
		expect((await expected(open(ws), { ...params, sessionId: id })) as { total: number }).toMatchObject({ total: 1 });
		expect(await open(ws).search(params)).toEqual(want);
	});
});
