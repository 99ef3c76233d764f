/**
 * The per-session write queue: one write per session at a time, in the order asked, each taking
 * the latest archive; sessions concurrently; a failed write does not stop the next.
 */
import { describe, expect, it } from "vitest";
import { emptySessionArchive, type SessionArchive } from "../../src/services/history/projections/archive.ts";
import { type Durability, SessionWriter } from "../../src/services/history/service/sessionWriter.ts";

/** An archive of the session, told apart from its other versions by its name. */
const archiveOf = (sessionId: string, name = "/w"): SessionArchive =>
	emptySessionArchive({ sessionId, version: 3, startedAt: "2026-01-01T00:00:00.000Z", name });

/** A writer over a map of current archives, whose store writes wait until released. */
function harness() {
	const current = new Map<string, SessionArchive>();
	const log: string[] = [];
	const pending: { id: string; release: (err?: Error) => void }[] = [];
	let syncs = 0;
	const writer = new SessionWriter({
		current: (id) => current.get(id),
		letGo: () => false,
		store: (id, archive, durability: Durability) =>
			new Promise<void>((resolve, reject) => {
				log.push(`start ${id} ${archive.session.name} ${durability}`);
				pending.push({ id, release: (err) => (err ? reject(err) : resolve()) });
			}),
		sync: async () => {
			syncs++;
		},
	});
	const settle = () => new Promise((r) => setTimeout(r, 0));
	return { current, log, pending, writer, settle, syncs: () => syncs };
}

describe("SessionWriter", () => {
	it("keeps one session's writes in order, one at a time, and runs different sessions concurrently", async () => {
		const h = harness();
		h.current.set("a", archiveOf("a", "/1"));
		h.current.set("b", archiveOf("b", "/1"));
		const a1 = h.writer.write("a");
		const b1 = h.writer.write("b");
		await h.settle();
		// Both sessions write at once; a's second write waits for its first.
		expect(h.log).toEqual(["start a /1 durable", "start b /1 durable"]);
		h.current.set("a", archiveOf("a", "/2"));
		const a2 = h.writer.write("a");
		await h.settle();
		expect(h.log).toHaveLength(2);
		h.pending.shift()?.release();
		await a1;
		await h.settle();
		expect(h.log[2]).toBe("start a /2 durable");
		for (const p of h.pending.splice(0)) p.release();
		await Promise.all([a2, b1]);
		expect(h.writer.busy).toBe(0);
	});

	it("takes the latest archive when a write's turn comes, and does not write one already written", async () => {
		const h = harness();
		h.current.set("a", archiveOf("a", "/1"));
		const first = h.writer.write("a");
		h.current.set("a", archiveOf("a", "/2"));
		const second = h.writer.write("a");
		h.current.set("a", archiveOf("a", "/3"));
		const third = h.writer.write("a");
		await h.settle();
		h.pending.shift()?.release();
		await first;
		await h.settle();
		h.pending.shift()?.release();
		await Promise.all([second, third]);
		// The first write took what was current when it started (/3 already: writes start in a later turn).
		expect(h.log).toEqual(["start a /3 durable"]);
		expect(h.pending).toHaveLength(0);
	});

	it("goes on after a failed write: the next one writes, and its caller sees only its own outcome", async () => {
		const h = harness();
		h.current.set("a", archiveOf("a", "/1"));
		const failed = h.writer.write("a");
		await h.settle();
		h.pending.shift()?.release(new Error("disk full"));
		await expect(failed).rejects.toThrow("disk full");
		h.current.set("a", archiveOf("a", "/2"));
		const next = h.writer.write("a");
		await h.settle();
		h.pending.shift()?.release();
		await expect(next).resolves.toBeUndefined();
		expect(h.log).toEqual(["start a /1 durable", "start a /2 durable"]);
	});

	it("syncs deferred writes once, and makes a deferred write durable when a durable one finds nothing new", async () => {
		const h = harness();
		h.current.set("a", archiveOf("a"));
		h.current.set("b", archiveOf("b"));
		const writes = [h.writer.write("a", "deferred"), h.writer.write("b", "deferred")];
		await h.settle();
		for (const p of h.pending.splice(0)) p.release();
		await Promise.all(writes);
		expect(h.syncs()).toBe(0);
		// A live update of "a" with nothing new to write: its last write must be durable now.
		await h.writer.write("a");
		expect(h.syncs()).toBe(1);
		await h.writer.syncDeferred();
		expect(h.syncs()).toBe(2);
		await h.writer.syncDeferred();
		expect(h.syncs()).toBe(2);
	});
});
