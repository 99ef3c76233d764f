import { describe, expect, it } from "vitest";
import { sessionIdFromFileName } from "../../src/services/history/model/sessionFileName.ts";

describe("sessionIdFromFileName", () => {
	const name = "2026-03-01T10-00-00-000Z_0195a3c4-1b2c-7d3e-8f40-123456789abc.jsonl";
	const id = "0195a3c4-1b2c-7d3e-8f40-123456789abc";

	it("takes the id from a bare name, a POSIX path and a Windows path (a header's parentSession may be either)", () => {
		expect(sessionIdFromFileName(name)).toBe(id);
		expect(sessionIdFromFileName(`/home/me/.pi/agent/sessions/--home-me-proj--/${name}`)).toBe(id);
		expect(sessionIdFromFileName(`C:\\Users\\me\\.pi\\agent\\sessions\\--C--proj--\\${name}`)).toBe(id);
		expect(sessionIdFromFileName(`C:\\Users\\me/mixed\\${name}`)).toBe(id);
	});

	it("looks only at the name: an id-like folder does not count", () => {
		expect(sessionIdFromFileName(`/x/a_0195a3c4-1b2c.jsonl/notes.txt`)).toBeUndefined();
		expect(sessionIdFromFileName(`/x/y_0195a3c4-1b2c.jsonl\\plain.jsonl`)).toBeUndefined();
	});

	it("finds nothing in a name without `_<id>.jsonl`", () => {
		expect(sessionIdFromFileName("")).toBeUndefined();
		expect(sessionIdFromFileName("/a/b/")).toBeUndefined();
		expect(sessionIdFromFileName("session.jsonl")).toBeUndefined();
		expect(sessionIdFromFileName("x_short.jsonl")).toBeUndefined();
		expect(sessionIdFromFileName(`${name}.bak`)).toBeUndefined();
	});
});
