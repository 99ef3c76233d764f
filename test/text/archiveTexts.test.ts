/**
 * A rebuild reads archives with their texts left as JSON bytes (`readArchiveTexts`) and makes each
 * projection from them (`projectArchiveTexts`): it must give byte for byte the projection that
 * parsing the archive whole gives (`projectSessionText`), for every kind of text — escapes, control
 * characters, scripts with and without case, characters that compose, lone surrogates, bytes that
 * are not UTF-8 — with and without copy keys; and leave to the usual read any file not written as
 * this project writes archives.
 */
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRng } from "../../bench/generator/prng.ts";
import { TextArena } from "../../src/services/history/model/textArena.ts";
import type { QaNode } from "../../src/services/history/model/types.ts";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import { projectArchiveTexts, WrittenTexts } from "../../src/services/history/projections/text/projectArchiveTexts.ts";
import { finishSessionText, projectSessionText } from "../../src/services/history/projections/text/projectSessionText.ts";
import { foldText } from "../../src/services/history/query/fold.ts";
import { archivePath, parseArchive } from "../../src/storage/history-files/archiveFiles.ts";
import { readArchiveTexts } from "../../src/storage/history-files/archiveTexts.ts";
import { fixtureIndex, fixtureState } from "../query/helpers.ts";

const folders: string[] = [];
afterAll(async () => {
	for (const f of folders) await rm(f, { recursive: true, force: true });
});

async function workspace(): Promise<string> {
	const ws = await mkdtemp(join(tmpdir(), "pbot-archive-texts-"));
	folders.push(ws);
	const { mkdir } = await import("node:fs/promises");
	await mkdir(join(ws, ".pi", "pbot", "history"), { recursive: true });
	return ws;
}

/** Pieces texts are made of: every path `unescape_fold` and `projectArchiveTexts` can take. */
const PIECES = [
	"plain words, Capitals and MORE ",
	'line\nbreak\ttab "quoted" back\\slash / slash\r\b\f',
	"\u0000\u0001\u001f control ",
	'"text":"not a key" ',
	"中文测试。日本語のテキスト、カタカナ",
	"한국어 문장 ",
	"emoji 😀🎉👍🏽 ",
	"“curly” — dash… ✓ → ∑ ⌘ ┌─┐ ",
	"ＡＢＣ full ａｂｃ？！ ",
	"Éléphant ÄÖÜ ß ",
	"İstanbul ",
	"ΟΔΟΣ σς ",
	"Привет МИР ",
	"e\u0301 composed ",
	"\u1100\u1161\u11a8 jamo \uac00\u11a8 ",
	"\u212a Kelvin ",
	"\u2126 Ohm ",
	"\u212b Angstrom ",
	"\u2000 space ",
	"\u2001 space ",
	"\u2329 angle ",
	"\u232a angle ",
	"\uf900 compatibility ",
	"\u{2f800} compatibility ",
	"か\u3099 voiced ",
	"\u302a mark ",
	"Ⓐ circled ",
	"Ⅻ numeral ",
	"\u00b5 \u00aa \u00a9 \u00bf latin-1 signs ",
	"\ud800 lone \udfff surrogates ",
	"𝒜𝒸𝓂ℯ ",
	"",
];

/** A text of random pieces, long enough for escapes and characters to fall on every side of a sixteen-byte block. */
function textFrom(rng: ReturnType<typeof createRng>, allowed: readonly string[]): string {
	let text = "";
	const count = rng.int(6);
	for (let i = 0; i < count; i++) text += `${"x".repeat(rng.int(17))}${allowed[rng.int(allowed.length)] as string}`;
	return text;
}

/** The fixtures' archives, with their texts replaced by generated ones (`allowed` pieces), and half their summaries ready. */
async function archivesWithTexts(seed: number, allowed: readonly string[]): Promise<SessionArchive[]> {
	const rng = createRng(seed);
	const keys = Object.keys(fixtureIndex.sessions).filter((k) => k !== "empty");
	const archives = Object.values((await fixtureState(keys)).sessions);
	return archives.map((archive) => ({
		...archive,
		nodes: Object.fromEntries(
			Object.entries(archive.nodes).map(([id, node]) => [id, { ...node, parts: node.parts.map((p) => ({ ...p, text: textFrom(rng, allowed) })) } as QaNode]),
		),
		summaries: Object.fromEntries(
			Object.entries(archive.summaries).map(([id, s], i) => [id, i % 2 === 0 ? { ...s, status: "ready" as const, text: textFrom(rng, allowed) } : s]),
		),
	}));
}

/** The projection both ways, finished with one revision, for an archive file of `workspace`. */
function bothWays(ws: string, id: string, bytes: Buffer, copyKeys: boolean, arena: TextArena): { fromBytes: Buffer; parsed: Buffer } {
	const read = readArchiveTexts(ws, id, arena);
	if (read === undefined || read === "unusual") throw new Error(`${id}: ${String(read)}`);
	const fromBytes = finishSessionText(projectArchiveTexts(read, arena, new WrittenTexts(), { copyKeys }), "r1");
	const parsed = finishSessionText(projectSessionText(parseArchive(bytes, id), { copyKeys }), "r1");
	return { fromBytes: Buffer.from(fromBytes), parsed };
}

describe("projectArchiveTexts", () => {
	const arena = TextArena.make();

	it("makes the projection that parsing the archive makes, for texts of every kind, with and without copy keys", async () => {
		expect(arena).toBeDefined();
		const ws = await workspace();
		let docs = 0;
		// Each piece also alone with ASCII: a character folding changes, among others it leaves, may
		// send the whole document to the string fold and hide a wrong byte fold of the others.
		const alone = PIECES.map((piece, i) => [10 + i, [piece, "ASCII and CAPS "]] as const);
		for (const [seed, allowed] of [[1, PIECES], [2, PIECES.slice(0, 9)], [3, ["plain", "A\\B", "ΟΔΟΣ", "✓"]], ...alone] as const) {
			for (const archive of await archivesWithTexts(seed, allowed)) {
				const id = archive.session.sessionId;
				const bytes = Buffer.from(`${JSON.stringify(archive)}\n`, "utf8");
				await writeFile(archivePath(ws, id), bytes);
				for (const copyKeys of [false, true]) {
					const { fromBytes, parsed } = bothWays(ws, id, bytes, copyKeys, arena as TextArena);
					expect(fromBytes.equals(parsed), `${id} seed ${seed} copyKeys ${copyKeys}`).toBe(true);
				}
				docs += Object.keys(archive.nodes).length + Object.keys(archive.summaries).length;
			}
		}
		expect(docs).toBeGreaterThan(100);
	});

	it("makes the same projection from JSON other tools write: \\u escapes, and bytes that are not UTF-8", async () => {
		const ws = await workspace();
		const [archive] = await archivesWithTexts(4, ["plain é text ", "ASCII ", "中文"]);
		const id = (archive as SessionArchive).session.sessionId;
		const json = JSON.stringify(archive);
		const variants = [
			// Escapes of characters beyond ASCII (and of ASCII letters), as other JSON writers make them.
			Buffer.from(json.replaceAll("é", "\\u00e9").replaceAll("中", "\\u4e2d").replaceAll("ASCII", "\\u0041SC\\u0049\\u0049"), "utf8"),
			// A byte that is no UTF-8, a character cut short, an encoded surrogate, a stray continuation
			// byte, an overlong form: each alone in its texts, and all together.
			...[[0xff], [0xe4, 0xb8, 0x20], [0xed, 0xa0, 0x80], [0x80], [0xe0, 0x80, 0x80], [0xff, 0xe4, 0xb8, 0x20, 0xed, 0xa0, 0x80, 0x80]].map((wrong) =>
				Buffer.concat(
					json
						.replaceAll("é", "e")
						.replaceAll("中文", "zw")
						.split("plain")
						.flatMap((piece, i) => (i === 0 ? [Buffer.from(piece)] : [Buffer.from(wrong), Buffer.from(piece)])),
				),
			),
		];
		for (const bytes of variants) {
			await writeFile(archivePath(ws, id), bytes);
			for (const copyKeys of [false, true]) {
				const { fromBytes, parsed } = bothWays(ws, id, bytes, copyKeys, arena as TextArena);
				expect(fromBytes.equals(parsed)).toBe(true);
			}
		}
	});

	it("leaves to the usual read a file not written as this project writes archives", async () => {
		const ws = await workspace();
		const [archive] = await archivesWithTexts(5, ["text"]);
		const id = (archive as SessionArchive).session.sessionId;
		const file = archivePath(ws, id);
		const a = arena as TextArena;
		expect(readArchiveTexts(ws, id, a)).toBeUndefined();
		const unusual = [
			// Spaces after the colons (a person's editor).
			JSON.stringify(archive, null, 1),
			// A legacy path field (the usual read rewrites the archive without it).
			JSON.stringify({ ...archive, session: { ...(archive as SessionArchive).session, file: "/home/someone/s.jsonl" } }),
			// Damaged: cut short, and a text that is not a string.
			JSON.stringify(archive).slice(0, 200),
			JSON.stringify(archive).replace(/"text":"[^"]*"/, '"text":42'),
			// Another version.
			JSON.stringify({ ...archive, version: 99 }),
			// A key with an escape, which JSON.parse reads as `text` (its value would be taken for a text's number).
			JSON.stringify(archive).replace('"text":"', '"te\\u0078t":"3","x":"'),
			// A space after a value.
			JSON.stringify(archive).replace('"qa",', '"qa" ,'),
		];
		for (const text of unusual) {
			await writeFile(file, text);
			expect(readArchiveTexts(ws, id, a), text.slice(0, 60)).toBe("unusual");
		}
		// Not a regular file.
		await rm(file);
		await writeFile(join(ws, "elsewhere.json"), JSON.stringify(archive));
		await symlink(join(ws, "elsewhere.json"), file);
		expect(readArchiveTexts(ws, id, a)).toBe("unusual");
	});
});

/** The characters `$invariant` in `byteSearch.wat` accepts (copied here from its comment, to be checked against it). */
const INVARIANT_RANGES: readonly (readonly [number, number])[] = [
	[0x80, 0xbf],
	[0x2002, 0x203f],
	[0x2190, 0x2328],
	[0x232b, 0x245f],
	[0x2500, 0x27bf],
	[0x3000, 0x3029],
	[0x3030, 0x3098],
	[0x309b, 0x30ff],
	[0x3400, 0x9fff],
	[0xac00, 0xd7a3],
	[0xff01, 0xff20],
	[0xff3b, 0xffef],
	[0x1f000, 0x1faff],
];

describe("the characters folded as bytes", () => {
	it("are those the module accepts, and each is left as it is by folding wherever it stands", () => {
		const arena = TextArena.make() as TextArena;
		const inRanges = (cp: number) => INVARIANT_RANGES.some(([low, high]) => cp >= low && cp <= high);
		// What canonical composition can put after a character: every code point after the first in
		// a canonical decomposition of a character that composes back.
		const seconds = new Set<number>();
		for (let cp = 0; cp <= 0x10ffff; cp++) {
			if (cp >= 0xd800 && cp <= 0xdfff) continue;
			const ch = String.fromCodePoint(cp);
			const nfd = ch.normalize("NFD");
			if (nfd !== ch && nfd.normalize("NFC") === ch) for (const tail of [...nfd].slice(1)) seconds.add(tail.codePointAt(0) as number);
		}
		expect(seconds.has(0x301)).toBe(true);
		expect(seconds.has(0x11a8)).toBe(true);
		const bytes = arena.take(64);
		let accepted = 0;
		for (let cp = 0x80; cp <= 0x10ffff; cp++) {
			if (cp >= 0xd800 && cp <= 0xdfff) continue;
			const ch = String.fromCodePoint(cp);
			const length = 2 + bytes.write(ch, 1);
			bytes[0] = 0x22;
			bytes[length - 1] = 0x22;
			const written = arena.unescapeFold(0, length, arena.textsAt, arena.foldedAt);
			expect(written).toBe(length - 2);
			const invariant = !arena.high;
			if (invariant !== inRanges(cp)) expect.fail(`U+${cp.toString(16)}: the module says ${invariant}`);
			if (!invariant) continue;
			accepted++;
			if (foldText(ch).folded !== ch || ch.normalize("NFC") !== ch || /\p{M}/u.test(ch) || seconds.has(cp) || foldText(`A${ch}`).folded !== `a${ch}`)
				expect.fail(`U+${cp.toString(16)} is not left as it is by folding`);
		}
		expect(accepted).toBeGreaterThan(40_000);
	});

	it("are not taken for characters when their bytes are not UTF-8", () => {
		const arena = TextArena.make() as TextArena;
		const bytes = arena.take(64);
		for (const wrong of [
			[0xed, 0xa0, 0x80],
			[0xe0, 0x80, 0x80],
			[0xe4, 0xb8],
			[0x80],
			[0xc2],
			[0xc2, 0x41],
			[0xf0, 0x9f, 0x98],
			[0xf0, 0x9f, 0x41, 0x80],
			[0xe4, 0x41, 0x80],
		]) {
			bytes[0] = 0x22;
			Buffer.from(wrong).copy(bytes, 1);
			bytes[1 + wrong.length] = 0x22;
			expect(arena.unescapeFold(0, wrong.length + 2, arena.textsAt, arena.foldedAt)).toBe(wrong.length);
			expect(arena.high, JSON.stringify(wrong)).toBe(true);
		}
	});
});
