/**
 * The session-heads cache keys files by a hash of their folder (no path in the cache) and scopes
 * itself to a hash of the workspace: FNV-1a 64, written in JavaScript so discovery loads no
 * `node:crypto`. Checked against the algorithm's published vectors and a BigInt reference.
 */
import { describe, expect, it } from "vitest";
import { digest } from "../../src/storage/history-files/sessionHeadsFile.ts";

function reference(text: string): string {
	let h = 0xcbf29ce484222325n;
	for (let i = 0; i < text.length; i++) h = ((h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
	return h.toString(16).padStart(16, "0");
}

describe("session-heads cache digest", () => {
	it("is FNV-1a 64 over the UTF-16 code units", () => {
		expect(digest("")).toBe("cbf29ce484222325");
		expect(digest("a")).toBe("af63dc4c8601ec8c");
		expect(digest("foobar")).toBe("85944171f73967e8");
		for (const text of ["/home/dana/work/acme", "C:\\Users\\dana\\acme", "é中😀", "\u0000\uffff", "x".repeat(10_000)])
			expect(digest(text), text.slice(0, 20)).toBe(reference(text));
		expect(digest("/home/dana/a")).not.toBe(digest("/home/dana/b"));
	});
});
