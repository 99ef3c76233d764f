/**
 * Deterministic mutations of real session files for the hostile-input fuzz test. Every mutation
 * takes the file's bytes and a seeded random source, and returns new bytes; the oracle
 * (`oracle.ts`) then says, from the mutated bytes alone, which lines must be rejected and which
 * Q&A parts must survive.
 */

/** Seeded PRNG (mulberry32): the same seed gives the same mutations on every machine. */
export function prng(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (random: Random, below: number) => Math.floor(random() * below);

const NL = 0x0a;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Lines of a file as byte arrays, without their newlines (a last line without one is kept). */
export function splitBytes(bytes: Uint8Array): Uint8Array[] {
	const lines: Uint8Array[] = [];
	let start = 0;
	for (let i = 0; i < bytes.length; i++) {
		if (bytes[i] === NL) {
			lines.push(bytes.subarray(start, i));
			start = i + 1;
		}
	}
	if (start < bytes.length) lines.push(bytes.subarray(start));
	return lines;
}

export function joinLines(lines: readonly Uint8Array[], trailingNewline = true): Uint8Array {
	const size = lines.reduce((n, l) => n + l.length + 1, 0) - (trailingNewline ? 0 : 1);
	const out = new Uint8Array(Math.max(0, size));
	let at = 0;
	lines.forEach((l, i) => {
		out.set(l, at);
		at += l.length;
		if (i < lines.length - 1 || trailingNewline) out[at++] = NL;
	});
	return out;
}

type Json = Record<string, unknown>;
const parse = (line: Uint8Array): Json | undefined => {
	try {
		const v = JSON.parse(decoder.decode(line)) as unknown;
		return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
	} catch {
		return undefined;
	}
};
const encode = (v: unknown) => encoder.encode(JSON.stringify(v));

/** Indexes of lines after the header (entries), the ones most mutations target. */
function entryIndexes(lines: readonly Uint8Array[]): number[] {
	return lines.map((_, i) => i).filter((i) => i > 0);
}

/** Applies `edit` to `count` random entry lines parsed as JSON; lines that do not parse are left. */
function editJson(lines: Uint8Array[], random: Random, count: number, edit: (entry: Json, random: Random, all: Uint8Array[]) => void): Uint8Array[] {
	const out = [...lines];
	const candidates = entryIndexes(out);
	for (let k = 0; k < count && candidates.length > 0; k++) {
		const i = pick(random, candidates);
		const entry = parse(out[i] as Uint8Array);
		if (!entry) continue;
		edit(entry, random, out);
		out[i] = encode(entry);
	}
	return out;
}

export interface Mutation {
	readonly name: string;
	apply(bytes: Uint8Array, random: Random): Uint8Array;
}

export const MUTATIONS: readonly Mutation[] = [
	{
		name: "truncation",
		apply: (bytes, random) => bytes.slice(0, 1 + int(random, bytes.length - 1)),
	},
	{
		name: "byte flips",
		apply: (bytes, random) => {
			const out = bytes.slice();
			for (let k = 0; k < 1 + int(random, 6); k++) {
				const at = int(random, out.length);
				out[at] = (out[at] as number) ^ (1 + int(random, 255));
			}
			return out;
		},
	},
	{
		name: "invalid UTF-8",
		apply: (bytes, random) => {
			const lines = splitBytes(bytes);
			const bad = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82]];
			for (let k = 0; k < 1 + int(random, 4); k++) {
				const i = pick(random, entryIndexes(lines));
				const line = lines[i] as Uint8Array;
				const at = int(random, line.length);
				const insert = pick(random, bad);
				lines[i] = Uint8Array.from([...line.subarray(0, at), ...insert, ...line.subarray(at)]);
			}
			return joinLines(lines);
		},
	},
	{
		name: "lone surrogates in text",
		apply: (bytes, random) => {
			const lines = editJson(splitBytes(bytes), random, 3, (entry) => {
				const message = entry.message as Json | undefined;
				if (message && Array.isArray(message.content)) message.content = [{ type: "text", text: `half \ud83d pair \udc00 end` }, ...message.content];
			});
			return joinLines(lines);
		},
	},
	{
		name: "huge lines",
		apply: (bytes, random) => {
			const lines = splitBytes(bytes);
			const i = 1 + int(random, lines.length - 1);
			const previous = parse(lines[i - 1] as Uint8Array);
			const size = 1_000_000 + int(random, 1_000_000);
			const huge =
				random() < 0.5
					? encode({
							type: "message",
							id: "huge0001",
							parentId: previous?.id ?? null,
							timestamp: "2026-03-01T10:00:00.000Z",
							message: { role: "user", content: [{ type: "text", text: "x".repeat(size) }] },
						})
					: encoder.encode(`{"type":"message","garbage":"${"y".repeat(size)}`);
			lines.splice(i, 0, huge);
			return joinLines(lines);
		},
	},
	{
		name: "wrong types",
		apply: (bytes, random) => {
			const wrong = [42, {}, [], "", true, null, "text", -1.5];
			const lines = editJson(splitBytes(bytes), random, 4, (entry, r) => {
				const field = pick(r, ["id", "parentId", "type", "message", "timestamp", "message.role", "message.content", "message.stopReason", "message.timestamp"]);
				const value = pick(r, wrong);
				if (field.startsWith("message.")) {
					const message = entry.message;
					if (typeof message === "object" && message !== null) (message as Json)[field.slice(8)] = value;
				} else entry[field] = value;
			});
			// And the header, now and then.
			if (random() < 0.3) {
				const head = parse(lines[0] as Uint8Array);
				if (head) {
					head[pick(random, ["id", "version", "timestamp", "cwd"])] = pick(random, wrong);
					lines[0] = encode(head);
				}
			}
			return joinLines(lines);
		},
	},
	{
		name: "missing fields",
		apply: (bytes, random) =>
			joinLines(
				editJson(splitBytes(bytes), random, 4, (entry, r) => {
					const field = pick(r, ["id", "parentId", "type", "message", "timestamp", "message.role", "message.content"]);
					if (field.startsWith("message.")) {
						const message = entry.message;
						if (typeof message === "object" && message !== null) delete (message as Json)[field.slice(8)];
					} else delete entry[field];
				}),
			),
	},
	{
		name: "duplicate ids",
		apply: (bytes, random) => {
			const lines = splitBytes(bytes);
			const ids = lines.map((l) => parse(l)?.id).filter((id): id is string => typeof id === "string");
			const edited = editJson(lines, random, 3, (entry, r) => {
				entry.id = pick(r, ids);
			});
			// And a whole line repeated further down.
			const i = 1 + int(random, edited.length - 1);
			edited.splice(1 + int(random, edited.length - 1), 0, edited[i] as Uint8Array);
			return joinLines(edited);
		},
	},
	{
		name: "parentId cycles",
		apply: (bytes, random) => {
			const lines = splitBytes(bytes);
			const entries = lines.map((l) => parse(l));
			const withIds = entries.map((e, i) => (typeof e?.id === "string" && i > 0 ? i : -1)).filter((i) => i > 0);
			if (withIds.length < 2) return bytes;
			for (let k = 0; k < 2; k++) {
				const a = pick(random, withIds);
				const b = pick(random, withIds);
				const ea = entries[a] as Json;
				const eb = entries[b] as Json;
				// a → b and b → a (a two-cycle, or a self-parent when a = b), pointing forward too.
				ea.parentId = eb.id;
				eb.parentId = ea.id;
				lines[a] = encode(ea);
				lines[b] = encode(eb);
			}
			return joinLines(lines);
		},
	},
	{
		name: "deep nesting",
		apply: (bytes, random) => {
			const lines = splitBytes(bytes);
			const depth = 100_000 + int(random, 100_000);
			const deep = "[".repeat(depth) + "]".repeat(depth);
			const previous = parse(lines[lines.length - 1] as Uint8Array);
			lines.splice(1 + int(random, lines.length - 1), 0, encoder.encode(`{"type":"custom","id":"deep0001","parentId":null,"data":${deep}}`));
			lines.splice(
				1 + int(random, lines.length - 1),
				0,
				encoder.encode(`{"type":"message","id":"deep0002","parentId":${JSON.stringify(previous?.id ?? null)},"message":{"role":"user","content":${deep}}}`),
			);
			lines.splice(1 + int(random, lines.length - 1), 0, encoder.encode(deep.slice(0, depth + 10)));
			return joinLines(lines);
		},
	},
	{
		name: "junk lines",
		apply: (bytes, random) => {
			const lines = splitBytes(bytes);
			const junk = [
				"not json",
				"[1,2,3]",
				'"a string"',
				"42",
				"null",
				"{}",
				'{"type":""}',
				'{"type":7}',
				"{",
				'{"type":"message"}',
				'{"type":"session","version":3}',
				"\t \r",
				"",
				"\u0000\u0001",
			];
			for (let k = 0; k < 1 + int(random, 6); k++) lines.splice(1 + int(random, lines.length), 0, encoder.encode(pick(random, junk)));
			return joinLines(lines);
		},
	},
];
