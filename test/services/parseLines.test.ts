import { describe, expect, it } from "vitest";
import { parseLine } from "../../src/services/history/ingest/parseLines.ts";

const line = (text: string, terminated = true) => ({ line: 7, bytes: new TextEncoder().encode(text), end: 0, terminated });

describe("parseLine", () => {
	it("reads a header without keeping anything but its fields", () => {
		const parsed = parseLine(line('{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}'));
		expect(parsed).toEqual({ kind: "header", header: { type: "session", line: 7, version: 3, id: "s1", timestamp: "2026-01-01T00:00:00Z", cwd: "/w" } });
	});

	it("treats a header without version as version 1", () => {
		const parsed = parseLine(line('{"type":"session","id":"s1"}'));
		expect(parsed.kind === "header" && parsed.header.version).toBe(1);
	});

	it("keeps user text and counts images, keeps assistant text and counts tool calls, drops thinking", () => {
		const u = parseLine(
			line(
				JSON.stringify({
					type: "message",
					id: "a",
					parentId: null,
					message: {
						role: "user",
						content: [
							{ type: "text", text: "hi" },
							{ type: "image", data: "AAAA", mimeType: "image/png" },
						],
					},
				}),
			),
		);
		expect(u.kind === "entry" && u.entry.message).toMatchObject({ role: "user", text: "hi", images: 1, toolCalls: 0 });
		const a = parseLine(
			line(
				JSON.stringify({
					type: "message",
					id: "b",
					parentId: "a",
					message: {
						role: "assistant",
						content: [
							{ type: "thinking", thinking: "secret" },
							{ type: "text", text: "side" },
							{ type: "toolCall", id: "c", name: "bash", arguments: {} },
						],
						stopReason: "toolUse",
					},
				}),
			),
		);
		expect(a.kind === "entry" && a.entry.message).toMatchObject({ role: "assistant", text: "side", toolCalls: 1, stopReason: "toolUse" });
		expect(JSON.stringify(a)).not.toContain("secret");
	});

	it("never keeps tool output", () => {
		const r = parseLine(
			line(JSON.stringify({ type: "message", id: "c", parentId: "b", message: { role: "toolResult", content: [{ type: "text", text: "OUTPUT" }] } })),
		);
		expect(JSON.stringify(r)).not.toContain("OUTPUT");
	});

	it("rejects what is not a JSON object of a known shape, with a reason", () => {
		expect(parseLine(line("not json"))).toMatchObject({ kind: "rejected", line: 7, reason: expect.stringContaining("not valid JSON") });
		expect(parseLine(line("[1,2]"))).toMatchObject({ kind: "rejected", reason: "not a JSON object" });
		expect(parseLine(line('{"id":"x"}'))).toMatchObject({ kind: "rejected", reason: "no entry type" });
		expect(parseLine(line('{"type":"message","id":"x"}'))).toMatchObject({ kind: "rejected", reason: expect.stringContaining("without a message") });
		expect(parseLine(line('{"type":"message","id":5,"message":{"role":"user"}}'))).toMatchObject({ kind: "rejected", reason: "entry id is not a string" });
	});

	it("holds an unterminated line that does not parse yet, and accepts one that does", () => {
		expect(parseLine(line('{"type":"mess', false))).toEqual({ kind: "held", line: 7, bytes: 13 });
		expect(parseLine(line('{"type":"label","id":"l","targetId":"a","label":"x"}', false)).kind).toBe("entry");
	});

	it("keeps where and why a line was rejected and its length, never its text (it can hold a path or a secret)", () => {
		const parsed = parseLine(line(`/home/someone/.ssh/id_rsa ${"x".repeat(10_000)}`));
		expect(parsed).toEqual({ kind: "rejected", line: 7, reason: expect.stringMatching(/^not valid JSON/), bytes: 10_026 });
		expect(JSON.stringify(parsed)).not.toContain("/home/someone");
	});

	it("rejects an oversized line alone, without decoding it", () => {
		expect(parseLine({ line: 3, bytes: new Uint8Array(0), end: 100, terminated: true, oversized: 600_000_000 })).toEqual({
			kind: "rejected",
			line: 3,
			reason: "a line of 600000000 bytes, longer than pbot reads: not read",
			bytes: 600_000_000,
		});
	});
});
