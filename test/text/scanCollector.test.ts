/**
 * A search's collector keeps, of sessions with no parent, only the hits that may still rank within
 * the page asked for, and counts the rest: a word found in most of a million documents costs a
 * page of hits in memory, not one object (and one held session head) per hit. Its answer is the
 * one keeping every hit gives.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { ScanCollector, type ScanHit } from "../../src/services/history/projections/text/scanTexts.ts";
import { SessionText } from "../../src/services/history/projections/text/sessionText.ts";
import { foldText } from "../../src/services/history/query/fold.ts";
import { textDir } from "../../src/storage/history-files/index.ts";
import { generatedWorkspace } from "../helpers/workspace.ts";

let workspace: string;
let texts: SessionText[];
let forkId: string;

beforeAll(async () => {
	const made = await generatedWorkspace("pbot-collector-");
	({ workspace } = made);
	const { sessions, agentDir } = made;
	for (let i = 0; i < 6; i++) {
		const { name, lines } = await made.write(40 + i, { profile: "chat", targetBytes: 120_000, targetQa: 40, startMs: Date.UTC(2025, 2, 1 + i) });
		if (i === 0) {
			// A fork of the first session: its first entries copied under a header naming it as the parent.
			forkId = "0195ffff-0000-7000-8000-000000000001";
			const header = { ...(JSON.parse(lines[0] as string) as object), id: forkId, parentSession: join(sessions, name) };
			await writeFile(
				join(sessions, `2025-03-09T00-00-00-000Z_${forkId}.jsonl`),
				`${[JSON.stringify(header), ...lines.slice(1, lines.length >> 1)].join("\n")}\n`,
			);
		}
	}
	await openWorkspaceHistory({ workspace, sessionDirs: [sessions], agentDir, migrate: false }).ingest();
	const dir = textDir(workspace);
	const files = (await readdir(dir)).filter((n) => n.endsWith(".text")).sort();
	texts = await Promise.all(files.map(async (n) => SessionText.parse(await readFile(join(dir, n)), n.slice(0, -".text".length), "whole")));
});

afterAll(async () => {
	await rm(workspace, { recursive: true, force: true });
});

const window = {};
const key = (h: ScanHit) => `${h.head.sessionId}/${h.row}/${h.id}/${h.level}/${h.endMs}/${String(h.verified)}`;

function collect(needle: string, keep: number | undefined): ScanCollector {
	const collector = new ScanCollector(foldText(needle).folded, { window }, keep);
	for (const text of texts) collector.add(text);
	return collector;
}

describe("ScanCollector", () => {
	it("holds a page of hits, not every hit, and answers as keeping every hit does", () => {
		expect(texts.some((t) => t.header.session.parentSessionId === forkId || t.sessionId === forkId)).toBe(true);
		let compared = 0;
		for (const needle of ["e", "the", "a", "session", "zzzz-not-there"]) {
			const all = collect(needle, undefined);
			for (const keep of [0, 1, 7, 20, 100]) {
				const paged = collect(needle, keep);
				const whole = all.finish(keep);
				const page = paged.finish(keep);
				expect(page.total, `${needle} ${keep}`).toBe(whole.total);
				expect(page.ranked.map(key), `${needle} ${keep}`).toEqual(whole.ranked.map(key));
				// The fork's hits are all held (they may be copies); of the others, at most `keep`.
				const forked = all.candidates.filter((h) => h.head.sessionId === forkId).length;
				expect(paged.held).toBeLessThanOrEqual(keep + forked);
				compared++;
			}
			// (Short needles match most documents: far more than the largest page held.)
			if (needle.length === 1) expect(all.held, needle).toBeGreaterThan(150);
		}
		expect(compared).toBe(25);
	});

	it("drops a fork's copies of its parent's hits from the total and the page", () => {
		const all = collect("e", undefined);
		const fork = all.candidates.filter((h) => h.head.sessionId === forkId);
		expect(fork.length).toBeGreaterThan(0);
		const { ranked, total } = collect("e", 10).finish(10);
		// Every Q&A the fork copied from its parent is a copy: only the parent's is counted and shown.
		expect(total).toBe(all.candidates.length - fork.filter((h) => h.level === 0).length);
		expect(ranked.some((h) => h.head.sessionId === forkId && h.level === 0)).toBe(false);
	});
});
