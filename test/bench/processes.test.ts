/**
 * The bench's whole processes never hang it: one past its time limit is killed and counted as a
 * failure; one killed without a word (a start-up hang, as a tsx child once did in CI) is run once
 * more. No timing is asserted beyond the limits given.
 */
import { describe, expect, it } from "vitest";
import { runProcess } from "../../bench/processes.ts";

describe("runProcess", () => {
	it("kills a process at its limit, and runs one that hung without a word once more", () => {
		const silent = runProcess(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { cwd: process.cwd(), timeoutMs: 400 });
		expect(silent).toMatchObject({ code: null, timedOut: true, retried: true, stdout: "" });

		const spoke = runProcess(process.execPath, ["-e", "console.log('started'); setInterval(() => {}, 1000)"], { cwd: process.cwd(), timeoutMs: 1500 });
		expect(spoke).toMatchObject({ code: null, timedOut: true });
		expect(spoke.stdout).toContain("started");
		expect(spoke.retried).toBeUndefined();

		const done = runProcess(process.execPath, ["-e", "console.log('ok')"], { cwd: process.cwd() });
		expect(done).toMatchObject({ code: 0, stdout: "ok\n" });
		expect(done.timedOut).toBeUndefined();
	});
});
