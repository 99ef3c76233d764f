/**
 * Crash safety (docs/architecture.md, "Durability"): a pbot process killed with SIGKILL at random moments, many times, while
 * ingesting growing session files, and separately while summarizing with pi-ai's faux model
 * through the summary worker. The long version is `npx tsx bench/crash-loop.ts`.
 */
import { describe, expect, it } from "vitest";
import { crashLoop } from "./crashLoop.ts";

describe("SIGKILL at random moments", () => {
	it.each([
		["ingest", 12],
		["summarize", 8],
	] as const)(
		"while %s (%i kills): every archive parses, nothing archived before a kill is missing after, and a final run equals a clean run",
		async (mode, kills) => {
			const result = await crashLoop({ mode, kills, seed: mode === "ingest" ? 1 : 2 });
			expect(result.problems).toEqual([]);
			expect(result.kills).toBe(kills);
			expect(result.unreadable).toBe(0);
			expect(result.nodesLost).toBe(0);
			expect(result.summariesLost).toBe(0);
			expect(result.archivesChecked).toBeGreaterThan(kills);
			expect(result.finalMatchesClean).toBe(true);
			expect(result.projectionsChecked).toBeGreaterThan(0);
			expect(result.projectionsTorn).toBe(0);
			expect(result.projectionMatches).toBe(true);
			expect(result.finalCount).toBeGreaterThan(0);
		},
		90_000,
	);
});
