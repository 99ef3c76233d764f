import { describe, expect, it } from "vitest";
import { errorOf } from "./helpers.ts";
import { parseInstant, parseNonNegativeInteger, parsePage, parseQueryText, parseTimeWindow } from "../../src/services/history/query/params.ts";

describe("dates", () => {
	it("takes a date alone as a whole UTC day: from its first millisecond, to its last", () => {
		expect(parseInstant("from", "2026-03-01", "start")).toBe(Date.parse("2026-03-01T00:00:00.000Z"));
		expect(parseInstant("to", "2026-03-01", "end")).toBe(Date.parse("2026-03-01T23:59:59.999Z"));
	});

	it("takes date-times with Z or an offset, with or without seconds and fractions", () => {
		expect(parseInstant("from", "2026-03-01T09:00Z", "start")).toBe(Date.parse("2026-03-01T09:00:00Z"));
		expect(parseInstant("from", "2026-03-01T09:00:25.5Z", "start")).toBe(Date.parse("2026-03-01T09:00:25.500Z"));
		expect(parseInstant("from", "2026-03-01T10:00:00+01:00", "start")).toBe(Date.parse("2026-03-01T09:00:00Z"));
		expect(parseInstant("from", "2026-03-01T04:30:00-04:30", "start")).toBe(Date.parse("2026-03-01T09:00:00Z"));
		expect(parseInstant("from", "2026-03-01T09:00:00.123456789Z", "start")).toBe(Date.parse("2026-03-01T09:00:00.123Z"));
	});

	it.each([
		["2026-13-01"],
		["2026-02-30"],
		["2026-02-29"],
		["2026-3-1"],
		["yesterday"],
		["1"],
		["2026-03-01T24:00Z"],
		["2026-03-01T09:60Z"],
		["2026-03-01T09:00:61Z"],
		["2026-03-01T09:00+25:00"],
		["2026-03-01 junk"],
		["March 1, 2026"],
	])("rejects %s with a message naming the parameter", (value) => {
		const err = errorOf(() => parseInstant("from", value, "start"));
		expect(err.code).toBe("BAD_PARAMETER");
		expect(err.parameter).toBe("from");
		expect(err.message).toContain(`from: ${JSON.stringify(value)} is not an ISO-8601 date`);
	});

	it("rejects a date-time without a zone instead of guessing one", () => {
		expect(errorOf(() => parseInstant("to", "2026-03-01T09:00", "end")).message).toMatch(/^to: "2026-03-01T09:00" has no time zone/);
	});

	it("rejects a non-string date", () => {
		expect(errorOf(() => parseInstant("to", 20260301, "end")).parameter).toBe("to");
	});

	it("accepts 2028-02-29 (a leap day) and an absent or empty date", () => {
		expect(parseInstant("from", "2028-02-29", "start")).toBe(Date.parse("2028-02-29T00:00:00Z"));
		expect(parseInstant("from", undefined, "start")).toBeUndefined();
		expect(parseInstant("from", "", "start")).toBeUndefined();
	});

	it("rejects from after to, and accepts from equal to to", () => {
		const err = errorOf(() => parseTimeWindow("2026-03-02", "2026-03-01"));
		expect(err.parameter).toBe("from");
		expect(err.message).toContain("is after to");
		expect(parseTimeWindow("2026-03-01T09:00Z", "2026-03-01T09:00Z")).toEqual({
			fromMs: Date.parse("2026-03-01T09:00Z"),
			toMs: Date.parse("2026-03-01T09:00Z"),
		});
		// A date alone as both ends is that whole day.
		expect(parseTimeWindow("2026-03-01", "2026-03-01")).toEqual({ fromMs: Date.parse("2026-03-01T00:00Z"), toMs: Date.parse("2026-03-01T23:59:59.999Z") });
	});
});

describe("paging", () => {
	const bounds = { defaultLimit: 20, maxLimit: 50 };
	it("defaults the limit, keeps 0 and 50, clamps 51 and says so", () => {
		expect(parsePage(undefined, undefined, bounds)).toEqual({ offset: 0, limit: 20, clamped: false });
		expect(parsePage(0, 0, bounds)).toEqual({ offset: 0, limit: 0, clamped: false });
		expect(parsePage(3, 50, bounds)).toEqual({ offset: 3, limit: 50, clamped: false });
		expect(parsePage(3, 51, bounds)).toEqual({ offset: 3, limit: 50, clamped: true });
		expect(parsePage("7", "1000", bounds)).toEqual({ offset: 7, limit: 50, clamped: true });
	});

	it.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], ["-1"], ["1.5"], ["ten"], [true], [[3]]])("rejects limit %s", (value) => {
		const err = errorOf(() => parsePage(0, value, bounds));
		expect(err.code).toBe("BAD_PARAMETER");
		expect(err.message).toMatch(/^limit: must be a non-negative integer/);
	});

	it("rejects a negative or fractional offset naming it", () => {
		expect(errorOf(() => parsePage(-1, 5, bounds)).message).toMatch(/^offset: must be a non-negative integer/);
		expect(errorOf(() => parseNonNegativeInteger("childrenOffset", 0.5)).message).toMatch(/^childrenOffset: /);
	});

	it("says an integer past any count is too large, not that it is no integer", () => {
		expect(errorOf(() => parsePage("999999999999999999999", 5, bounds)).message).toBe(
			`offset: is too large (at most ${Number.MAX_SAFE_INTEGER}; got "999999999999999999999")`,
		);
	});
});

describe("query text", () => {
	it("trims surrounding whitespace and keeps inner whitespace as written", () => {
		expect(parseQueryText("  two  spaces\t")).toBe("two  spaces");
		expect(parseQueryText("\u3000全角\u3000")).toBe("全角");
		expect(parseQueryText(undefined)).toBe("");
		expect(parseQueryText("   ")).toBe("");
	});
	it("rejects a query that is not a string", () => {
		expect(errorOf(() => parseQueryText(42)).parameter).toBe("query");
	});
});
