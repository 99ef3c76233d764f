/**
 * Pi's footer while pbot works: progress of long work, and who an ingest waits for when another
 * pbot process reads the workspace's sessions (a person can tell a stuck process from a busy one).
 */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { ProgressStatus, waitingText } from "../../src/integrations/pi/history/progressStatus.ts";

describe("ProgressStatus", () => {
	it("shows who an ingest waits for, and clears it when the wait is over", () => {
		const shown: (string | undefined)[] = [];
		const status = new ProgressStatus();
		status.showIn((t) => void shown.push(t));
		status.waiting({ pid: 4242, host: hostname(), since: "2026-12-06T05:01:02.000Z" });
		status.waiting(undefined);
		expect(shown).toEqual(["pbot: waiting for another pbot process (pid 4242, since 05:01:02 UTC) that is reading this workspace's sessions", undefined]);
	});

	it("names the host of a holder on another machine (a shared folder), and leaves out an unknown start", () => {
		expect(waitingText({ pid: 7, host: "build-box", since: "" })).toBe(
			"waiting for another pbot process (pid 7 on build-box) that is reading this workspace's sessions",
		);
	});
});
