import { describe, expect, it } from "vitest";
import { highlightMatches } from "../../src/integrations/pi/history/highlight.ts";

const mark = (m: string) => `[${m}]`;

describe("highlightMatches", () => {
	it("marks every match the way search matches, on the original characters", () => {
		expect(highlightMatches("Otter, otter, OTTER!", "otter", mark)).toBe("[Otter], [otter], [OTTER]!");
		// Full-width case, and é typed as one code point or as e + U+0301.
		expect(highlightMatches("ｏｔｔｅｒ and cafe\u0301 and café", "café", mark)).toBe("ｏｔｔｅｒ and [cafe\u0301] and [café]");
		expect(highlightMatches("ＯＴＴＥＲ", "ｏｔｔｅｒ", mark)).toBe("[ＯＴＴＥＲ]");
	});

	it("leaves text alone when nothing matches or the query is empty", () => {
		expect(highlightMatches("nothing here", "otter", mark)).toBe("nothing here");
		expect(highlightMatches("nothing here", "  ", mark)).toBe("nothing here");
	});
});
