/**
 * The history generator is deterministic: the same preset and seed give the same bytes, file for
 * file; another seed gives other bytes. And what it writes is a Pi history pbot can read.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateHistory, PRESETS, type HistoryManifest } from "../../bench/generator/index.ts";
import { replayEvents } from "../helpers/entries.ts";

const roots: string[] = [];
afterAll(async () => {
	for (const r of roots) await rm(r, { recursive: true, force: true });
});

async function generated(seed: number): Promise<{ dir: string; manifest: HistoryManifest }> {
	const dir = await mkdtemp(join(tmpdir(), "pbot-gen-"));
	roots.push(dir);
	return { dir, manifest: generateHistory({ dir, preset: PRESETS.tiny as (typeof PRESETS)["tiny"], seed }) };
}

async function filesOf(dir: string): Promise<Map<string, Buffer>> {
	const out = new Map<string, Buffer>();
	for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
		if (entry.isFile()) out.set(join(entry.parentPath, entry.name).slice(dir.length), await readFile(join(entry.parentPath, entry.name)));
	}
	return out;
}

describe("the history generator", () => {
	it("writes the same bytes for the same seed, and other bytes for another seed", async () => {
		const a = await generated(42);
		const b = await generated(42);
		const c = await generated(43);
		const fa = await filesOf(a.dir);
		const fb = await filesOf(b.dir);
		expect([...fa.keys()].sort()).toEqual([...fb.keys()].sort());
		for (const [name, bytes] of fa) expect(bytes.equals(fb.get(name) as Buffer), name).toBe(true);
		expect(a.manifest).toEqual(b.manifest);
		const fc = await filesOf(c.dir);
		expect([...fc.keys()].sort()).not.toEqual([...fa.keys()].sort());
	});

	it("writes Pi sessions whose bytes sit where real histories' do, and which pbot reads without a rejected line", async () => {
		const { dir, manifest } = await generated(7);
		const h = manifest.history;
		expect(h.bytes).toBeGreaterThan(PRESETS.tiny!.historyBytes);
		// Most bytes in tool results and tool-call messages, a small share in questions and answers.
		expect((h.byKind.toolResult + h.byKind.assistantToolCalls) / h.bytes).toBeGreaterThan(0.6);
		expect((h.byKind.user + h.byKind.finalAnswer) / h.bytes).toBeLessThan(0.35);
		for (const [nodes, folder] of Object.entries(manifest.search)) expect(folder.questions).toBe(Number(nodes));
		let questions = 0;
		for (const sub of ["sessions", "single", "search-300"]) {
			for (const name of await readdir(join(dir, sub))) {
				const events = await replayEvents(new Uint8Array(await readFile(join(dir, sub, name))));
				expect(
					events.filter((e) => e.type === "LineRejected"),
					name,
				).toEqual([]);
				questions += events.filter((e) => e.type === "QaObserved").length;
			}
		}
		expect(questions).toBeGreaterThan(300);
	});
});
