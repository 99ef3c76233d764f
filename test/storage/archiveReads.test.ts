/**
 * `parseJsonInPieces` must give exactly what `JSON.parse` of the whole text gives (values, key
 * order, repeated keys, `__proto__`), and fail with the native parser's own error on anything
 * damaged. Small piece sizes split every object and array of the fixtures' archives. Archives are
 * read into one reused buffer (`ReusedBuffer`): each read must still give its own archive.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readArchive, writeArchive } from "../../src/storage/history-files/index.ts";
import { archivePath, readArchiveParent } from "../../src/storage/history-files/archiveFiles.ts";
import { writeFile } from "node:fs/promises";
import { ReusedBuffer } from "../../src/services/history/model/reusedBuffer.ts";
import { jsonBytes } from "../../src/storage/history-files/writeJsonAtomic.ts";
import { leadingMembers, parseJsonInPieces, splitAndParse } from "../../src/storage/history-files/jsonInPieces.ts";
import { fixtureIndex, fixtureState } from "../query/helpers.ts";

/** The same value, the same keys in the same order, all the way down. */
function expectSame(bytes: Buffer, pieceBytes: number): void {
	const whole = JSON.parse(bytes.toString("utf8")) as unknown;
	const pieces = parseJsonInPieces(bytes, pieceBytes);
	expect(pieces).toStrictEqual(whole);
	// Split for real, not parsed whole after a split that went wrong.
	expect(splitAndParse(bytes, pieceBytes)).toStrictEqual(whole);
	expect(JSON.stringify(pieces)).toBe(JSON.stringify(whole));
}

/** What `JSON.parse` throws for `text`. */
function nativeError(text: string): string {
	try {
		JSON.parse(text);
	} catch (err) {
		return (err as Error).message;
	}
	throw new Error(`${text} parsed`);
}

describe("parseJsonInPieces", () => {
	it("parses the fixtures' archives to what JSON.parse gives, at every piece size", async () => {
		const keys = Object.keys(fixtureIndex.sessions);
		const archives = Object.values((await fixtureState(keys)).sessions);
		expect(archives.length).toBeGreaterThan(3);
		for (const archive of archives) {
			const bytes = jsonBytes(archive);
			for (const pieceBytes of [1, 16, 256, 4096, bytes.length + 1]) expectSame(bytes, pieceBytes);
			// Pretty-printed: space, newlines and tabs between every token.
			expectSame(Buffer.from(JSON.stringify(archive, null, "\t")), 8);
			expectSame(Buffer.from(`\n  ${JSON.stringify(archive, null, 1)}\r\n`), 8);
		}
	});

	it("keeps strings whole: escaped quotes and backslashes, brackets and commas inside text, non-ASCII", () => {
		const value = {
			a: 'say "hi", then [go] {now}',
			b: "ends with a backslash \\",
			c: ["\\", '\\"', '"', "\\\\", "", "İstanbul ΣΑΣ 🐘 日本語"],
			d: { 'key with "quote" and \\': [[], {}, [[1, 2.5e-3, -0]], null, true, false] },
			"": "empty key",
		};
		expectSame(Buffer.from(JSON.stringify(value)), 1);
		expectSame(Buffer.from(JSON.stringify(value, null, 2)), 4);
	});

	it("treats a repeated key and __proto__ as JSON.parse does", () => {
		const text = '{"a":1,"b":{"x":[1,2,3]},"a":{"later":true},"__proto__":{"polluted":1},"c":[1,2]}';
		const pieces = splitAndParse(Buffer.from(text), 1) as Record<string, unknown>;
		expect(pieces).toStrictEqual(JSON.parse(text));
		expect(Object.keys(pieces)).toEqual(["a", "b", "__proto__", "c"]);
		expect(Object.getPrototypeOf(pieces)).toBe(Object.prototype);
		expect(Object.getOwnPropertyDescriptor(pieces, "__proto__")?.value).toEqual({ polluted: 1 });
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
	});

	it("fails as JSON.parse does on damaged JSON", () => {
		const good = JSON.stringify({ nodes: { a: { text: "one, two" }, b: { text: "three" } }, list: [1, 2, 3] });
		const damaged = [
			good.slice(0, -1), // cut short
			good.slice(0, good.length / 2),
			`${good}}`, // trailing bracket
			`${good} x`, // trailing garbage
			good.replace('"b":', '"b"'), // no colon
			good.replace(',"b"', ' "b"'), // no comma
			good.replace("[1,2,3]", "[1,2,]"), // trailing comma
			good.replace("[1,2,3]", "[1,,3]"),
			good.replace('"one, two"', '"one, two'), // unterminated string
			`\ufeff${good}`, // a byte-order mark
			"",
			"   ",
		];
		for (const text of damaged) {
			const message = nativeError(text);
			for (const pieceBytes of [1, 8, 1 << 20]) expect(() => parseJsonInPieces(Buffer.from(text), pieceBytes)).toThrow(message);
		}
	});

	it("parses values that are not objects or arrays whole", () => {
		for (const text of ['"a long string, with [brackets]"', "12345", "null", " true ", "[]", "{}", " [ ] ", "{ }"]) expectSame(Buffer.from(text), 1);
	});
});

describe("archives read into one reused buffer", () => {
	let workspace: string;
	beforeEach(async () => {
		workspace = await mkdtemp(join(tmpdir(), "pbot-read-buffer-"));
	});
	afterEach(async () => {
		await rm(workspace, { recursive: true, force: true });
	});

	it("gives each read its own archive, however the reads interleave (nothing keeps the shared bytes)", async () => {
		const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
		const archives = Object.values((await fixtureState(keys)).sessions);
		for (const archive of archives) await writeArchive(workspace, archive);
		const read = [];
		for (const archive of archives) read.push(await readArchive(workspace, archive.session.sessionId));
		// Read again, largest first then smallest: each later read reuses (and overwrites) the buffer.
		for (const archive of [...archives].reverse()) read.push(await readArchive(workspace, archive.session.sessionId));
		expect(read).toEqual([...archives, ...[...archives].reverse()]);
	});

	it("reuses its buffer up to its limit, and reads a larger file into a buffer of its own", () => {
		const buffer = new ReusedBuffer(1 << 20);
		const a = buffer.take(100_000);
		const b = buffer.take(50_000);
		expect(b.buffer).toBe(a.buffer);
		const big = buffer.take(2 << 20);
		expect(big.length).toBe(2 << 20);
		expect(big.buffer).not.toBe(a.buffer);
		expect(buffer.take(10).buffer).toBe(a.buffer);
		// Grown (not past its limit) for a larger file within it.
		const grown = buffer.take(900_000);
		expect(grown.length).toBe(900_000);
		expect(buffer.take(5).buffer).toBe(grown.buffer);
	});
});

describe("an archive's parent from its first bytes", () => {
	let workspace: string;
	beforeEach(async () => {
		workspace = await mkdtemp(join(tmpdir(), "pbot-parent-"));
	});
	afterEach(async () => {
		await rm(workspace, { recursive: true, force: true });
	});

	it("is what the whole archive says, and undefined when its first bytes do not tell", async () => {
		const archives = Object.values((await fixtureState(Object.keys(fixtureIndex.sessions))).sessions);
		expect(archives.filter((a) => a.session.parentSessionId !== undefined).length).toBeGreaterThan(0);
		for (const archive of archives) {
			await writeArchive(workspace, archive);
			expect(readArchiveParent(workspace, archive.session.sessionId)).toBe(archive.session.parentSessionId ?? null);
		}
		const [first] = archives;
		if (!first) throw new Error("no archive");
		const id = first.session.sessionId;
		expect(readArchiveParent(workspace, "0190ffff-0000-7000-8000-000000000000")).toBeUndefined();
		// `session` past the first 4 KB, another version, a session cut off, another session's id: not told.
		const { format, version, session, ...rest } = first;
		for (const json of [
			JSON.stringify({ format, version, ...rest, pad: "x".repeat(5000), session }),
			JSON.stringify({ ...first, version: 99 }),
			JSON.stringify({ format, version, session }).slice(0, 60),
			JSON.stringify({ format, version, session: { ...session, sessionId: "0190ffff-0000-7000-8000-000000000000" } }),
		]) {
			await writeFile(archivePath(workspace, id), json);
			expect(readArchiveParent(workspace, id)).toBeUndefined();
		}
	});

	it("reads leading members up to the one asked for, and no further", () => {
		const bytes = Buffer.from('{"a":"x\\"y,}","b":[1,{"c":"]"}],"__proto__":{"d":1},"e":');
		expect(leadingMembers(bytes, "b")).toEqual({ a: 'x"y,}', b: [1, { c: "]" }] });
		const proto = leadingMembers(bytes, "__proto__");
		expect(Object.keys(proto ?? {})).toEqual(["a", "b", "__proto__"]);
		expect(leadingMembers(bytes, "e")).toBeUndefined();
		expect(leadingMembers(bytes, "z")).toBeUndefined();
		expect(leadingMembers(Buffer.from("[1,2]"), "a")).toBeUndefined();
	});
});
