/**
 * Sessions of one title among a page of hits (a fork, a copy) are told apart by the end of their
 * ids, long enough to differ; a title of its own needs nothing.
 */
import { describe, expect, it } from "vitest";
import { idEndsOfSharedTitles } from "../../src/services/history/query/sessionLabels.ts";

describe("idEndsOfSharedTitles", () => {
	it("gives the sessions that share a title the end of their ids, 4 characters or as many as it takes", () => {
		const hits = [
			{ sessionId: "019cdc1f-d680-7663-ac93-882da27c4d6a", sessionTitle: "Version bump planning" },
			{ sessionId: "019cdc23-08d6-75e5-8cf8-4df4f91bdd63", sessionTitle: "Version bump planning" },
			{ sessionId: "019cdc23-08d6-75e5-8cf8-4df4f91bdd63", sessionTitle: "Version bump planning" },
			{ sessionId: "019ca8a0-3e80-75b1-a224-e6318e1138e5", sessionTitle: "Greeting script check" },
			// A copy made with its source: the same start, ends that differ only in their last 5 characters.
			{ sessionId: "019cc260-0a80-76ed-a677-9215a0d2860e", sessionTitle: "Step 1" },
			{ sessionId: "019cc260-0a80-76ed-a677-9215a0d1860e", sessionTitle: "Step 1" },
		];
		expect(idEndsOfSharedTitles(hits)).toEqual(
			new Map([
				["019cdc1f-d680-7663-ac93-882da27c4d6a", "…4d6a"],
				["019cdc23-08d6-75e5-8cf8-4df4f91bdd63", "…dd63"],
				["019cc260-0a80-76ed-a677-9215a0d2860e", "…2860e"],
				["019cc260-0a80-76ed-a677-9215a0d1860e", "…1860e"],
			]),
		);
		expect(idEndsOfSharedTitles(hits.slice(3, 4))).toEqual(new Map());
	});
});
