import { describe, expect, it } from "vitest";
import { qaId, summaryId } from "../../src/services/history/model/ids.ts";

const SID = "019c0000-0000-7000-8000-000000000001";

describe("stable ids", () => {
	// Archives written by every earlier version hold these ids: the derivation may never change
	// (values computed with the original createHash implementation).
	it("derives the same ids as every earlier version", () => {
		expect(qaId(SID, ["a1b2c3d4"])).toBe("qa_1ixGHhdcOnQcGhg7pMFV");
		expect(qaId(SID, ["a1b2c3d4", "e5f6"], ["x1", "y2"])).toBe("qa_y_m0oHKtK7lzIcc0iBQT");
		expect(summaryId(SID, 2, ["s1_a", "s1_b", "s1_c", "s1_d"])).toBe("s2_YOSByuKbcR44wynCnHw8");
	});

	it("separates parts, so joining them differently gives another id", () => {
		expect(qaId(SID, ["ab", "c"])).not.toBe(qaId(SID, ["a", "bc"]));
	});
});
