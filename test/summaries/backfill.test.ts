import { describe, expect, it } from "vitest";
import { backfillScope, describeBacklog, splitBacklog } from "../../src/services/history/summaries/backfill.ts";

describe("backfill policy", () => {
	const backlog = new Map([
		["current", { due: 3, inputChars: 4_000 }],
		["past-a", { due: 1_000, inputChars: 8_000_000 }],
		["past-b", { due: 649, inputChars: 400_000 }],
		["past-c", { due: 0, inputChars: 0 }],
	]);

	it("splits the current session's calls from the past sessions' and estimates their input tokens", () => {
		const split = splitBacklog(backlog, "current");
		expect(split).toEqual({ currentCalls: 3, pastCalls: 1_649, pastSessions: 2, pastTokens: 2_100_000 + 1_649 * 250 });
		expect(describeBacklog(split)).toBe("1,649 summaries in 2 sessions (about 2.5M input tokens)");
		expect(describeBacklog(splitBacklog(new Map([["x", { due: 1, inputChars: 400 }]]), "current"))).toBe("1 summary in 1 session (about 350 input tokens)");
	});

	it("counts what was due in the current session when it started as earlier work, with its share of the input", () => {
		const split = splitBacklog(new Map([["current", { due: 10, inputChars: 40_000 }]]), "current", 8);
		expect(split).toEqual({ currentCalls: 2, pastCalls: 8, pastSessions: 1, pastTokens: 8_000 + 8 * 250 });
		expect(splitBacklog(new Map([["current", { due: 3, inputChars: 1 }]]), "current", 0).pastSessions).toBe(0);
	});

	it("runs everything at or below the threshold, asks above it, and follows a stored answer either way", () => {
		const small = splitBacklog(new Map([["p", { due: 50, inputChars: 1 }]]), "current");
		const large = splitBacklog(backlog, "current");
		expect(backfillScope(small, { threshold: 50 })).toBe("all");
		expect(backfillScope(large, { threshold: 50 })).toBe("ask");
		expect(backfillScope(large, { threshold: 50, backfill: "on" })).toBe("all");
		expect(backfillScope(small, { threshold: 50, backfill: "off" })).toBe("current");
		expect(backfillScope(large, { threshold: 5_000 })).toBe("all");
	});
});
