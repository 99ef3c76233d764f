/**
 * The query a `/pbot history` notice or picker title, and the CLI's heading, echo: a pasted
 * paragraph with no hits added about 45 lines to the chat at 80 columns, so a long one is cut and
 * its length said; it is shown as typed, on one line (the CLI's JSON quoting had doubled a path's
 * backslashes).
 */
import { describe, expect, it } from "vitest";
import { shownQuery } from "../../src/services/history/query/printable.ts";

describe("the query a notice shows", () => {
	it("is quoted whole up to 80 characters, control characters made visible", () => {
		expect(shownQuery("heron nests")).toBe('"heron nests"');
		expect(shownQuery("a\u001b[2Jb")).toBe('"a␛[2Jb"');
		expect(shownQuery("C:\\temp\\x")).toBe('"C:\\temp\\x"');
		expect(shownQuery('say "hi"')).toBe('"say "hi""');
		expect(shownQuery("two\nlines\tand a tab")).toBe('"two␊lines␉and a tab"');
	});

	it("is cut after 80 characters (code points: an emoji is one), its length said", () => {
		const pasted = `${"longword ".repeat(300)}🦩`;
		const shown = shownQuery(pasted);
		expect(shown).toBe(`"${Array.from(pasted).slice(0, 80).join("")}…" (${Array.from(pasted).length} characters)`);
		expect(shown.length).toBeLessThan(110);
		expect(shownQuery("🦩".repeat(81))).toBe(`"${"🦩".repeat(80)}…" (81 characters)`);
	});
});
