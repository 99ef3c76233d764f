import { Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../src/services/history/model/events.ts";
import { LiveIngest } from "../../src/services/history/service/liveIngest.ts";

const batch = (id: string): HistoryEvent[] => [{ type: "SummaryMarkedStale", sessionId: "s", id }];

describe("LiveIngest", () => {
	it("applies each batch as it comes, tells the watcher after, and settles when the writes so far have landed", async () => {
		const applied: string[] = [];
		const releases: (() => void)[] = [];
		const live = new LiveIngest(
			{
				applyEvents: (events) => {
					applied.push((events[0] as { id: string }).id);
					return new Promise<void>((resolve) => releases.push(resolve));
				},
			},
			{ onUpdateError: () => undefined, onTailError: () => undefined },
		);
		const tail = new Subject<readonly HistoryEvent[]>();
		const seen: string[] = [];
		live.follow(tail, (events) => seen.push(`${(events[0] as { id: string }).id} after ${applied.length} applied`));
		tail.next(batch("a"));
		tail.next(batch("b"));
		expect(applied).toEqual(["a", "b"]);
		expect(seen).toEqual(["a after 1 applied", "b after 2 applied"]);
		expect(live.inFlight).toBe(2);
		let settled = false;
		const waiting = live.settled().then(() => (settled = true));
		releases[0]?.();
		await new Promise((r) => setTimeout(r, 5));
		expect(settled).toBe(false);
		releases[1]?.();
		await waiting;
		expect(live.inFlight).toBe(0);
	});

	it("reports a failed update and goes on with the next batch; reports a tail that ends with an error", async () => {
		const errors: string[] = [];
		let calls = 0;
		const live = new LiveIngest(
			{ applyEvents: async () => (calls++ === 0 ? Promise.reject(new Error("disk full")) : undefined) },
			{ onUpdateError: (err) => errors.push(`update: ${err.message}`), onTailError: (err) => errors.push(`tail: ${err.message}`) },
		);
		const tail = new Subject<readonly HistoryEvent[]>();
		live.follow(tail);
		tail.next(batch("a"));
		tail.next(batch("b"));
		await live.settled();
		tail.error(new Error("file gone"));
		expect(calls).toBe(2);
		expect(errors).toEqual(["update: disk full", "tail: file gone"]);
	});
});
