/**
 * One ingest run over fake sources: at most MAX_PENDING_WRITES archive writes in flight while it
 * reads on, checkpoints saved only after the writes landed and the folder was synced, a failed
 * write reported and never vouched for, unchanged files skipped by their fingerprints.
 */
import { EMPTY } from "rxjs";
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { type AppliedFile, type IngestRunPorts, MAX_PENDING_WRITES, mapLimit, runIngest } from "../../src/services/history/service/ingestRun.ts";
import type { SessionSource, SourceCheckpoint } from "../../src/services/history/service/ports.ts";

const source = (i: number): SessionSource => ({
	key: `file-${i}`,
	stateKey: `s${i}/file-${i}`,
	read: () => EMPTY,
	fingerprint: async () => `fp-${i}`,
	state: async () => ({ key: `s${i}/file-${i}`, size: 10, mtimeMs: 1, headHash: "h" }),
});

function ports(overrides: Partial<IngestRunPorts> & { writeOf?: (i: number) => Promise<void> } = {}) {
	const log: string[] = [];
	let inFlight = 0;
	let maxInFlight = 0;
	const base: IngestRunPorts = {
		fingerprints: new Map(),
		checkpoints: new Map<string, SourceCheckpoint>(),
		archiveExists: () => true,
		replay: async (s, onState) => {
			// A source tells its state as it opens the file (the run takes no state ahead without a checkpoint).
			const state = await s.state?.();
			if (state) onState?.(state);
			return [{ type: "SessionSeen", session: { sessionId: s.key } } as HistoryEvent];
		},
		apply: async (s): Promise<AppliedFile> => {
			const i = Number(s.key.slice(5));
			inFlight++;
			maxInFlight = Math.max(maxInFlight, inFlight);
			const landed = (overrides.writeOf?.(i) ?? new Promise<void>((r) => setTimeout(r, 2))).finally(() => {
				inFlight--;
				log.push(`landed ${i}`);
			});
			return { sessionId: `s${i}`, write: landed };
		},
		syncDeferred: async () => void log.push("sync"),
		saveCheckpoints: async (fresh) => void log.push(`save ${fresh.size}`),
		...overrides,
	};
	return { ports: base, log, maxInFlight: () => maxInFlight };
}

describe("runIngest", () => {
	it("keeps at most MAX_PENDING_WRITES writes in flight, then syncs once and saves the checkpoints last", async () => {
		const p = ports();
		const sources = Array.from({ length: 30 }, (_, i) => source(i));
		const report = await runIngest(p.ports, sources, false, []);
		expect(report.sessions).toHaveLength(0); // the fake apply reports no counts
		expect(p.maxInFlight()).toBeLessThanOrEqual(MAX_PENDING_WRITES);
		expect(p.maxInFlight()).toBeGreaterThan(1);
		expect(p.log.slice(-2)).toEqual(["sync", "save 30"]);
		expect(p.ports.checkpoints?.get("s3/file-3")).toMatchObject({ sessionId: "s3", stamp: "fp-3" });
		expect(p.ports.fingerprints.get("file-3")).toBe("fp-3");
	});

	it("vouches for nothing of a failed write and says why", async () => {
		const p = ports({ writeOf: (i) => (i === 1 ? Promise.reject(new Error("disk full")) : Promise.resolve()) });
		const warnings: string[] = [];
		await runIngest(p.ports, [source(0), source(1)], false, warnings);
		expect(warnings).toEqual(["file-1: disk full"]);
		expect([...(p.ports.checkpoints?.keys() ?? [])]).toEqual(["s0/file-0"]);
		expect(p.ports.fingerprints.has("file-1")).toBe(false);
	});

	it("saves no checkpoint when the folder sync fails", async () => {
		const p = ports({ syncDeferred: () => Promise.reject(new Error("EIO")) });
		const warnings: string[] = [];
		await runIngest(p.ports, [source(0)], false, warnings);
		expect(warnings).toEqual(["archives: EIO"]);
		expect(p.log).not.toContain("save 1");
	});

	it("on a refresh, skips files whose fingerprint is their checkpoint's stamp, without reading them", async () => {
		const read: string[] = [];
		const checkpoints = new Map<string, SourceCheckpoint>([["s0/file-0", { size: 10, mtimeMs: 1, headHash: "h", sessionId: "s0", stamp: "fp-0" }]]);
		const p = ports({
			checkpoints,
			replay: async (s) => {
				read.push(s.key);
				return [];
			},
		});
		const report = await runIngest(p.ports, [source(0), source(1)], true, []);
		expect(read).toEqual(["file-1"]);
		expect(report.unchangedFiles).toBe(1);
	});
});

describe("mapLimit", () => {
	it("keeps results in order with at most `limit` calls in flight", async () => {
		let inFlight = 0;
		let most = 0;
		const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n) => {
			most = Math.max(most, ++inFlight);
			await new Promise((r) => setTimeout(r, n));
			inFlight--;
			return n * 10;
		});
		expect(out).toEqual([50, 10, 40, 20, 30]);
		expect(most).toBe(2);
	});
});
