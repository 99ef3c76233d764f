/**
 * The service searches by scanning the text projection on disk. Its answers must be the plain
 * scan's over the archives (`searchHistory` on a view of every archive): same hits, order, pages,
 * snippets, `verified`, totals — on Pi's own files and on generated sessions with summaries,
 * filters, paging and fork copies. (This replaced the comparison of the old trigram index.)
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { generateSession } from "../../bench/generator/session.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { SummaryRecord } from "../../src/services/history/projections/archive.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { searchHistory, type SearchParams } from "../../src/services/history/query/index.ts";
import { fixtureIndex, fixtureWorkspace, summaryReady } from "../query/helpers.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("all");

/** Queries of every kind: short, phrases, CJK, case and Unicode folds, absent, and needles that need the text check. */
const QUERIES = [
	"a",
	"e",
	"的",
	"İ",
	"σ",
	"ok",
	"ß",
	"😀",
	"👍🏽",
	"𝒜",
	"the",
	"ing",
	"Ship",
	"HELLO",
	"rotate",
	"version",
	"1.4.2",
	"release owner",
	"dana whitfield",
	"hello from acme",
	"topic-01",
	"kw01",
	"note-0042",
	"payload-0",
	"END-OF-LONG-ANSWER",
	"module-07",
	"greet.js",
	"missing.txt",
	"no such file",
	"这",
	"이미지",
	"日本語",
	"ΟΔΟΣ",
	"οδος",
	"İstanbul",
	"i̇",
	"𝒜𝒸𝓂ℯ",
	"\u00e9",
	"e\u0301",
	"zzzz-not-there",
	"qqq",
	"\ufffd",
	"\ud83d",
	"half \ud83d pair",
	" ",
	"  ",
	"\n\n",
	"the the",
];

/** Compares the service's answer with the plain scan's over all archives, loaded by a second service. */
async function expectSame(service: HistoryService, reference: HistoryService, params: SearchParams): Promise<void> {
	const scanned = await service.search(params);
	const plain = searchHistory(reference.getView(), params);
	expect(scanned, JSON.stringify(params)).toEqual(plain);
}

async function openPair(workspace: string, sessions: string, agentDir: string) {
	const open = () => openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false });
	const service = open();
	await service.ingest();
	const reference = open();
	await reference.load();
	return { service, reference };
}

/**
 * A new process's service after the workspace's search text was deleted and made again from the
 * archives by a catch-up that makes every projection (`packAfter: 1`: into one pack, from the
 * archives' bytes), with the warning that says so.
 */
async function rebuiltService(workspace: string, sessions: string, agentDir: string): Promise<HistoryService> {
	await rm(join(workspace, ".pi", "pbot", "text"), { recursive: true, force: true });
	const rebuilding = openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false, packAfter: 1 });
	await rebuilding.sessions({ limit: 1 });
	const warnings = rebuilding.takeWarnings();
	expect(
		warnings.some((w) => /search text rebuilt from the archives \(\d+ missing\)/.test(w)),
		warnings.join("; "),
	).toBe(true);
	expect(existsSync(join(workspace, ".pi", "pbot", "text", "pack.cache"))).toBe(true);
	return openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false });
}

/** Phrases cut from the archives' own texts: what a person remembers and types. */
function phrasesOf(reference: HistoryService, count: number, seed: number): string[] {
	const rng = createRng(seed);
	const texts = Object.values(reference.archiveState().sessions).flatMap((a) => Object.values(a.nodes).map((n) => n.parts.map((p) => p.text).join("\n\n")));
	const out: string[] = [];
	while (out.length < count) {
		const text = texts[rng.int(texts.length)] as string;
		if (text.length < 4) continue;
		const at = rng.int(text.length - 3);
		out.push(text.slice(at, at + rng.range(1, 30)));
	}
	return out;
}

describe("search over the text projection", () => {
	it("finds exactly what a plain scan of the archives finds on Pi's own files, query by query", async () => {
		const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
		const ws = await fixtureWorkspace(keys);
		cleanups.push(ws.workspace);
		const { service, reference } = await openPair(ws.workspace, ws.sessions, ws.agentDir);
		for (const query of [...QUERIES, ...phrasesOf(reference, 120, 1)]) {
			await expectSame(service, reference, { query });
			await expectSame(service, reference, { query, limit: 3, offset: 1 });
		}
		expect(service.isLoaded).toBe(false);
		// The search text rebuilt from the archives (as after it was deleted: every projection made into
		// one pack, from the archives' bytes), then searched by a new process.
		const rebuilt = await rebuiltService(ws.workspace, ws.sessions, ws.agentDir);
		for (const query of [...QUERIES, ...phrasesOf(reference, 60, 3)]) await expectSame(rebuilt, reference, { query });
	});

	it("finds exactly what a plain scan finds on generated sessions, with summaries, filters, paging and fork copies", async () => {
		const workspace = await mkdtemp(join(tmpdir(), "pbot-scan-"));
		cleanups.push(workspace);
		const sessions = join(workspace, "sessions");
		const agentDir = join(workspace, "agent");
		await mkdir(sessions, { recursive: true });
		await mkdir(agentDir, { recursive: true });
		const files: { name: string; lines: string[] }[] = [];
		for (let i = 0; i < 5; i++) {
			const lines: string[] = [];
			const profile = i % 2 === 0 ? "agent" : "chat";
			generateSession(
				createRng(10 + i),
				{ profile, targetBytes: 250_000, targetQa: profile === "chat" ? 60 : undefined, startMs: Date.UTC(2025, 0, 1 + i) } as never,
				(l) => lines.push(l),
			);
			const id = (JSON.parse(lines[0] as string) as { id: string }).id;
			files.push({ name: `2025-01-0${i + 1}T00-00-00-000Z_${id}.jsonl`, lines });
		}
		// A fork of the first session: its early entries copied under a new header naming the parent.
		const source = files[0] as { name: string; lines: string[] };
		const sourceHeader = JSON.parse(source.lines[0] as string) as Record<string, unknown>;
		const forkId = "0190eeee-0000-7000-8000-000000000001";
		const forkHeader = { ...sourceHeader, id: forkId, parentSession: join(sessions, source.name) };
		files.push({
			name: `2025-01-09T00-00-00-000Z_${forkId}.jsonl`,
			lines: [JSON.stringify(forkHeader), ...source.lines.slice(1, Math.floor(source.lines.length / 2))],
		});
		for (const f of files) await writeFile(join(sessions, f.name), `${f.lines.join("\n")}\n`);

		const open = () => openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false });
		const writer = open();
		await writer.ingest();
		// Half the summaries made ready (through the service: archives and projection written as in Pi).
		await writer.load();
		const summaries = Object.values(writer.archiveState().sessions).flatMap((a) => Object.values(a.summaries)) as SummaryRecord[];
		await writer.applyEvents(
			summaries
				.filter((_, i) => i % 2 === 0)
				.map((s, i) =>
					summaryReady(
						s,
						// Some with a lone surrogate (a cut emoji), some with U+FFFD itself: a search for either must tell them apart.
						`Summary ${i}: the session discussed ${s.id.slice(3, 9)} and the Release Owner ΟΔΟΣ 的 İ.${i % 3 === 0 ? " cut \ud83d here" : i % 3 === 1 ? " kept \ufffd here" : ""}`,
					),
				),
		);
		const service = open();
		const reference = open();
		await reference.load();
		expect(Object.values(reference.archiveState().sessions).some((a) => a.session.parentSessionId !== undefined)).toBe(true);

		const sessionId = Object.keys(reference.archiveState().sessions)[1] as string;
		for (const query of [...QUERIES, ...phrasesOf(reference, 200, 2)]) {
			await expectSame(service, reference, { query });
			await expectSame(service, reference, { query, limit: 50, offset: 20 });
		}
		for (const query of ["the", "Summary", "session", "error", "config", "release owner"]) {
			await expectSame(service, reference, { query, sessionId });
			await expectSame(service, reference, { query, sessionId: forkId });
			await expectSame(service, reference, { query, from: "2025-01-02", to: "2025-01-03T12:00Z" });
			await expectSame(service, reference, { query, limit: 0 });
			for (let offset = 0; offset < 120; offset += 37) await expectSame(service, reference, { query, offset, limit: 7 });
		}
		// Without a query, and the errors, in the same order.
		await expectSame(service, reference, { query: "  ", limit: 50 });
		await expectSame(service, reference, { from: "2025-01-02", limit: 50 });
		expect(await service.sessions({ limit: 50 })).toEqual(searchHistory(reference.getView(), { limit: 50 }));
		for (const bad of [
			{ query: "x", sessionId: "0190dddd-0000-7000-8000-000000000000", from: "nope" },
			{ query: "x", from: "2026-13-01" },
			{ query: "x", limit: -1 },
			{ sessionId: "nope" },
		]) {
			const scanned = await service.search(bad).catch((err: Error) => err.message);
			const plain = (() => {
				try {
					return searchHistory(reference.getView(), bad);
				} catch (err) {
					return (err as Error).message;
				}
			})();
			expect(scanned, JSON.stringify(bad)).toEqual(plain);
		}
		expect(service.isLoaded).toBe(false);
		const rebuilt = await rebuiltService(workspace, sessions, agentDir);
		for (const query of [...QUERIES, ...phrasesOf(reference, 80, 4)]) await expectSame(rebuilt, reference, { query });
		for (const query of ["the", "Summary", "release owner"]) {
			await expectSame(rebuilt, reference, { query, sessionId: forkId });
			await expectSame(rebuilt, reference, { query, limit: 50, offset: 20 });
		}
		expect(await rebuilt.sessions({ limit: 50 })).toEqual(searchHistory(reference.getView(), { limit: 50 }));
	});
});
