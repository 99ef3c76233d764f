/**
 * The fast path of `parseLines`: reads a `message` line of a session file on its raw bytes,
 * without decoding it to a string or building its JSON value, and returns exactly the entry the
 * full parse (`JSON.parse` + trimming) would return — or `undefined` when it cannot be sure, and
 * the caller parses the line in full.
 *
 * Why: about 85 % of a history's bytes are tool results and assistant messages with tool calls
 * (thinking, signatures, tool arguments and output), none of which a Q&A keeps. Decoding UTF-8 is
 * the slowest step of a naive reader (V8's decoder takes its slow path on almost every line), and
 * `JSON.parse` then builds objects only to drop them. Here the line is **validated** byte by byte
 * as JSON (the same grammar `JSON.parse` accepts), and only the few strings a Q&A needs are decoded.
 *
 * What is accepted without a full parse — anything else returns `undefined`:
 * - the line starts with Pi's layout, byte for byte:
 *   `{"type":"message","id":"<id>","parentId":<"<id>"|null>,"timestamp":"<time>","message":{"role":"<role>"`
 *   where `<id>`, `<time>` and `<role>` are printable ASCII without `"` or `\` (ids non-empty);
 * - from the `{` of `message` on, the bytes are one valid JSON object (strings may hold any byte
 *   except raw control characters below 0x20; escapes are `\" \\ \/ \b \f \n \r \t \uXXXX`;
 *   numbers, literals, nesting and whitespace as in RFC 8259), followed by exactly one `}` that
 *   ends the line — so the top level has exactly those five keys;
 * - in the message object, the keys `role`, `content`, `stopReason`, `errorMessage` and
 *   `timestamp` appear at most once and no key there has an escape (a duplicate or escaped key
 *   could change which value `JSON.parse` keeps); the same holds for `type` and `text` in the
 *   blocks of `content`, and a block's `type` has no escape.
 * Bytes that are not valid UTF-8 may appear inside strings: the decoder of the full parse turns
 * them into U+FFFD without touching the ASCII bytes around them, so the JSON structure is the same
 * on bytes as on the decoded text, and the strings that are kept are decoded the same way.
 */
import { type StringEnd, stringEndOf } from "../model/byteSearch.ts";
import type { EntryLite, MessageLite } from "./sessionEntry.ts";

const decoder = new TextDecoder("utf-8");

// Byte values.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const PREFIX = ascii('{"type":"message","id":"');
const PARENT = ascii(',"parentId":');
const NULL = ascii("null");
const TIMESTAMP = ascii(',"timestamp":"');
const MESSAGE = ascii(',"message":{"role":"');

// Keys the scan watches, as bit flags (for duplicate detection).
const K_OTHER = 0;
const K_ROLE = 1;
const K_CONTENT = 2;
const K_STOP = 4;
const K_ERROR = 8;
const K_TIME = 16;
const K_TYPE = 32;
const K_TEXT = 64;

// What a container is, for the keys it watches.
const C_OTHER = 0;
const C_MESSAGE = 1;
const C_CONTENT = 2;
const C_BLOCK = 3;

const KEY_ROLE = ascii("role");
const KEY_CONTENT = ascii("content");
const KEY_STOP = ascii("stopReason");
const KEY_ERROR = ascii("errorMessage");
const KEY_TIME = ascii("timestamp");
const KEY_TYPE = ascii("type");
const KEY_TEXT = ascii("text");
const TYPE_TEXT = ascii("text");
const TYPE_IMAGE = ascii("image");
const TYPE_TOOLCALL = ascii("toolCall");

/** A value found for a watched key: where its token is and what kind it is. */
const V_NONE = 0;
const V_STRING = 1;
const V_NUMBER = 2;
const V_ARRAY = 3;
const V_OTHER = 4;

/** Scratch state of one scan (reused: the scan is synchronous and not re-entrant). */
interface Found {
	content: number;
	contentStart: number;
	contentEnd: number;
	stopKind: number;
	stopStart: number;
	stopEnd: number;
	errorKind: number;
	errorStart: number;
	errorEnd: number;
	timeKind: number;
	timeStart: number;
	timeEnd: number;
	/** Byte ranges of the text strings of `text` blocks, in order (pairs). */
	texts: number[];
	images: number;
	toolCalls: number;
}

const found: Found = {
	content: V_NONE,
	contentStart: 0,
	contentEnd: 0,
	stopKind: V_NONE,
	stopStart: 0,
	stopEnd: 0,
	errorKind: V_NONE,
	errorStart: 0,
	errorEnd: 0,
	timeKind: V_NONE,
	timeStart: 0,
	timeEnd: 0,
	texts: [],
	images: 0,
	toolCalls: 0,
};

/**
 * The entry of a `message` line in Pi's layout, read without a full parse; `undefined` when the
 * line is not in that layout or anything about it is unusual (the caller then parses it in full,
 * which also decides whether it is rejected).
 */
export function scanMessageLine(bytes: Uint8Array, line: number): EntryLite | undefined {
	const end = bytes.length;
	if (end < 64 || bytes[end - 1] !== RBRACE || !startsWith(bytes, 0, PREFIX)) return undefined;
	let i = PREFIX.length;
	const idEnd = plainString(bytes, i);
	if (idEnd <= i) return undefined;
	const id = latin1(bytes, i, idEnd);
	i = idEnd + 1;
	if (!startsWith(bytes, i, PARENT)) return undefined;
	i += PARENT.length;
	let parentId: string | null;
	if (startsWith(bytes, i, NULL)) {
		parentId = null;
		i += NULL.length;
	} else {
		if (bytes[i] !== QUOTE) return undefined;
		const parentEnd = plainString(bytes, i + 1);
		if (parentEnd < 0) return undefined;
		parentId = latin1(bytes, i + 1, parentEnd);
		i = parentEnd + 1;
	}
	if (!startsWith(bytes, i, TIMESTAMP)) return undefined;
	i += TIMESTAMP.length;
	const timeEnd = plainString(bytes, i);
	if (timeEnd < 0) return undefined;
	const timestamp = latin1(bytes, i, timeEnd);
	i = timeEnd + 1;
	if (!startsWith(bytes, i, MESSAGE)) return undefined;
	const messageStart = i + MESSAGE.length - '{"role":"'.length;
	i += MESSAGE.length;
	const roleEnd = plainString(bytes, i);
	if (roleEnd < 0) return undefined;
	const rawRole = latin1(bytes, i, roleEnd);

	const withContent = rawRole === "user" || rawRole === "assistant";
	prepareStringScans(bytes);
	const after = validateMessage(bytes, messageStart, end - 1, withContent);
	if (after !== end - 1) return undefined;

	const role = rawRole === "hookMessage" ? "custom" : rawRole;
	const message: { -readonly [K in keyof MessageLite]: MessageLite[K] } = { role, text: "", images: 0, toolCalls: 0 };
	if (found.timeKind === V_NUMBER) {
		const at = Number(latin1(bytes, found.timeStart, found.timeEnd));
		if (Number.isFinite(at)) message.at = at;
	}
	if (withContent) {
		if (found.content === V_STRING) message.text = decodeString(bytes, found.contentStart, found.contentEnd);
		else if (found.content === V_ARRAY) {
			const texts = found.texts;
			if (texts.length === 2) message.text = decodeString(bytes, texts[0] as number, texts[1] as number);
			else if (texts.length > 2) {
				const parts: string[] = [];
				for (let k = 0; k < texts.length; k += 2) parts.push(decodeString(bytes, texts[k] as number, texts[k + 1] as number));
				message.text = parts.join("\n\n");
			}
			message.images = found.images;
			message.toolCalls = found.toolCalls;
		}
	}
	if (rawRole === "assistant") {
		if (found.stopKind === V_STRING) message.stopReason = decodeString(bytes, found.stopStart, found.stopEnd);
		if (found.errorKind === V_STRING) message.error = decodeString(bytes, found.errorStart, found.errorEnd);
	}
	return { type: "message", line, id, parentId, timestamp, message };
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
	if (at + prefix.length > bytes.length) return false;
	for (let k = 0; k < prefix.length; k++) if (bytes[at + k] !== prefix[k]) return false;
	return true;
}

/** End (index of the closing quote) of a string of printable ASCII without `\`, or -1. */
function plainString(bytes: Uint8Array, from: number): number {
	for (let k = from; k < bytes.length; k++) {
		const c = bytes[k] as number;
		if (c === QUOTE) return k;
		if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
	}
	return -1;
}

const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;

/** Bytes known to be printable ASCII, as a string (Node's native Latin-1 slice: no decoder, no copy of the array). */
function latin1(bytes: Uint8Array, from: number, to: number): string {
	return latin1Slice.call(bytes, from, to);
}

/** A JSON string token `[from, to)` (quotes included), decoded as the full parse would. */
function decodeString(bytes: Uint8Array, from: number, to: number): string {
	return JSON.parse(decoder.decode(bytes.subarray(from, to))) as string;
}

function equalBytes(bytes: Uint8Array, from: number, to: number, word: Uint8Array): boolean {
	if (to - from !== word.length) return false;
	for (let k = 0; k < word.length; k++) if (bytes[from + k] !== word[k]) return false;
	return true;
}

const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/**
 * Validates the JSON object at `start` (the message), recording the watched keys' values in
 * `found`. Returns the index just after the object, or -1 when the bytes are not valid JSON or a
 * watched key is duplicated or escaped. `limit` is where the object must end at the latest.
 */
function validateMessage(b: Uint8Array, start: number, limit: number, withContent: boolean): number {
	found.content = V_NONE;
	found.stopKind = V_NONE;
	found.errorKind = V_NONE;
	found.timeKind = V_NONE;
	found.texts.length = 0;
	found.images = 0;
	found.toolCalls = 0;

	// Per open container: 1 = object, 2 = array; its context; watched keys seen (objects).
	const kinds: number[] = [];
	const contexts: number[] = [];
	const seen: number[] = [];
	// Per open block (object in `content`): its `type` (0 none/other, 1 text, 2 image, 3 toolCall) and text range.
	let blockType = 0;
	let blockTextStart = -1;
	let blockTextEnd = -1;

	let key = K_OTHER; // the watched key whose value comes next
	let i = start;
	const VALUE = 0;
	const KEY = 1;
	const AFTER = 2;
	let state = VALUE;

	for (;;) {
		if (state === VALUE) {
			while (i < limit && isWs(b[i] as number)) i++;
			if (i >= limit) return -1;
			const c = b[i] as number;
			const depth = kinds.length;
			const parent = depth === 0 ? -1 : (contexts[depth - 1] as number);
			if (c === QUOTE) {
				const from = i;
				i = scanString(b, i, limit);
				if (i < 0) return -1;
				if (key !== K_OTHER) {
					if (parent === C_MESSAGE) {
						if (key === K_CONTENT) {
							found.content = V_STRING;
							found.contentStart = from;
							found.contentEnd = i;
						} else if (key === K_STOP) {
							found.stopKind = V_STRING;
							found.stopStart = from;
							found.stopEnd = i;
						} else if (key === K_ERROR) {
							found.errorKind = V_STRING;
							found.errorStart = from;
							found.errorEnd = i;
						} else if (key === K_TIME) found.timeKind = V_OTHER;
					} else if (parent === C_BLOCK) {
						if (key === K_TYPE) {
							if (hasEscape(b, from + 1, i - 1)) return -1;
							blockType = equalBytes(b, from + 1, i - 1, TYPE_TEXT)
								? 1
								: equalBytes(b, from + 1, i - 1, TYPE_IMAGE)
									? 2
									: equalBytes(b, from + 1, i - 1, TYPE_TOOLCALL)
										? 3
										: 0;
						} else if (key === K_TEXT) {
							blockTextStart = from;
							blockTextEnd = i;
						}
					}
				}
				state = AFTER;
				continue;
			}
			if (c === LBRACE || c === LBRACKET) {
				let context = C_OTHER;
				if (depth === 0) context = C_MESSAGE;
				else if (parent === C_MESSAGE && key === K_CONTENT && c === LBRACKET && withContent) context = C_CONTENT;
				else if (parent === C_CONTENT && c === LBRACE) {
					context = C_BLOCK;
					blockType = 0;
					blockTextStart = -1;
				}
				if (parent === C_MESSAGE && key !== K_OTHER) recordOther(key, c === LBRACKET);
				else if (parent === C_BLOCK && key === K_TYPE) blockType = 0;
				else if (parent === C_BLOCK && key === K_TEXT) blockTextStart = -1;
				kinds.push(c === LBRACE ? 1 : 2);
				contexts.push(context);
				seen.push(0);
				i++;
				while (i < limit && isWs(b[i] as number)) i++;
				if (i >= limit) return -1;
				if (b[i] === (c === LBRACE ? RBRACE : RBRACKET)) {
					i++;
					kinds.pop();
					contexts.pop();
					seen.pop();
					if (context === C_BLOCK) closeBlock(blockType, blockTextStart, blockTextEnd);
					if (kinds.length === 0) return i;
					state = AFTER;
					continue;
				}
				key = K_OTHER;
				state = c === LBRACE ? KEY : VALUE;
				continue;
			}
			// Numbers and literals.
			const from = i;
			if (c === MINUS || (c >= ZERO && c <= NINE)) {
				i = scanNumber(b, i, limit);
				if (i < 0) return -1;
				if (parent === C_MESSAGE && key === K_TIME) {
					found.timeKind = V_NUMBER;
					found.timeStart = from;
					found.timeEnd = i;
				} else if (parent === C_MESSAGE && key !== K_OTHER) recordOther(key, false);
				else if (parent === C_BLOCK && key === K_TYPE) blockType = 0;
				else if (parent === C_BLOCK && key === K_TEXT) blockTextStart = -1;
			} else {
				const word = c === 0x74 ? "true" : c === 0x66 ? "false" : c === 0x6e ? "null" : undefined;
				if (word === undefined || i + word.length > limit) return -1;
				for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -1;
				i += word.length;
				if (parent === C_MESSAGE && key !== K_OTHER) recordOther(key, false);
				else if (parent === C_BLOCK && key === K_TYPE) blockType = 0;
				else if (parent === C_BLOCK && key === K_TEXT) blockTextStart = -1;
			}
			state = AFTER;
			continue;
		}

		if (state === KEY) {
			while (i < limit && isWs(b[i] as number)) i++;
			if (i >= limit || b[i] !== QUOTE) return -1;
			const from = i + 1;
			i = scanString(b, i, limit);
			if (i < 0) return -1;
			const depth = kinds.length;
			const context = contexts[depth - 1] as number;
			key = K_OTHER;
			if (context === C_MESSAGE || context === C_BLOCK) {
				const to = i - 1;
				if (hasEscape(b, from, to)) return -1;
				if (context === C_MESSAGE) {
					key = equalBytes(b, from, to, KEY_ROLE)
						? K_ROLE
						: equalBytes(b, from, to, KEY_CONTENT)
							? K_CONTENT
							: equalBytes(b, from, to, KEY_STOP)
								? K_STOP
								: equalBytes(b, from, to, KEY_ERROR)
									? K_ERROR
									: equalBytes(b, from, to, KEY_TIME)
										? K_TIME
										: K_OTHER;
				} else key = equalBytes(b, from, to, KEY_TYPE) ? K_TYPE : equalBytes(b, from, to, KEY_TEXT) ? K_TEXT : K_OTHER;
				if (key !== K_OTHER) {
					const mask = seen[depth - 1] as number;
					if ((mask & key) !== 0) return -1;
					seen[depth - 1] = mask | key;
				}
			}
			while (i < limit && isWs(b[i] as number)) i++;
			if (i >= limit || b[i] !== COLON) return -1;
			i++;
			state = VALUE;
			continue;
		}

		// AFTER a value: a comma or the end of the container.
		while (i < limit && isWs(b[i] as number)) i++;
		if (i >= limit) return -1;
		const c = b[i] as number;
		const depth = kinds.length;
		const kind = kinds[depth - 1] as number;
		if (c === COMMA) {
			i++;
			key = K_OTHER;
			if (kind === 1) state = KEY;
			else {
				state = VALUE;
			}
			continue;
		}
		if ((kind === 1 && c === RBRACE) || (kind === 2 && c === RBRACKET)) {
			i++;
			const context = contexts[depth - 1] as number;
			kinds.pop();
			contexts.pop();
			seen.pop();
			if (context === C_BLOCK) closeBlock(blockType, blockTextStart, blockTextEnd);
			if (kinds.length === 0) return i;
			// The value just closed belonged to a key of the enclosing object (already recorded).
			key = K_OTHER;
			state = AFTER;
			continue;
		}
		return -1;
	}
}

/** A watched message key got a value that is not a string (or, for `content`, an array). */
function recordOther(key: number, isArray: boolean): void {
	if (key === K_CONTENT) found.content = isArray ? V_ARRAY : V_OTHER;
	else if (key === K_STOP) found.stopKind = V_OTHER;
	else if (key === K_ERROR) found.errorKind = V_OTHER;
	else if (key === K_TIME) found.timeKind = V_OTHER;
}

/** What the full parse does with one block of `content`: keep text, count images and tool calls. */
function closeBlock(type: number, textStart: number, textEnd: number): void {
	if (type === 1 && textStart >= 0) found.texts.push(textStart, textEnd);
	else if (type === 2) found.images++;
	else if (type === 3) found.toolCalls++;
}

function hasEscape(b: Uint8Array, from: number, to: number): boolean {
	for (let k = from; k < to; k++) if (b[k] === BACKSLASH) return true;
	return false;
}

/**
 * The line as 32-bit words (signed: V8 keeps them small integers), for skipping through long strings four bytes at a time: a word is
 * skipped when none of its bytes is a quote, a backslash or a control character (exact bit tricks,
 * no false negatives). `wordsStart` is the line index of the first word's first byte.
 */
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);
let wordsStart = 0;
/**
 * For a line in a searchable buffer (a session file is read into one, `sessionFiles.ts`): the
 * byte search module's `string_end`, which scans a whole string in one call, plain bytes sixteen at
 * a time (`byteSearch.wat`), and the line's address in its memory. The four-byte steps below are
 * for other lines (one that spans two reads).
 */
let stringEnd: StringEnd | undefined;
let lineBase = 0;

function prepareStringScans(bytes: Uint8Array): void {
	stringEnd = stringEndOf(bytes);
	lineBase = bytes.byteOffset;
	if (stringEnd !== undefined) return;
	const aligned = (bytes.byteOffset + 3) & ~3;
	wordsStart = aligned - bytes.byteOffset;
	const count = Math.max(0, (bytes.length - wordsStart) >> 2);
	words = new Int32Array(bytes.buffer, aligned, count);
}

/**
 * Validates a JSON string token starting at the quote `at`; returns the index after its closing
 * quote, or -1. The hot loop of the whole fast path: most bytes of a history are inside strings.
 */
function scanString(b: Uint8Array, at: number, limit: number): number {
	if (stringEnd !== undefined) {
		const end = stringEnd(lineBase + at + 1, lineBase + limit);
		return end < 0 ? -1 : end - lineBase;
	}
	let i = at + 1;
	for (;;) {
		if (i >= wordsStart && ((i - wordsStart) & 3) === 0) {
			let w = (i - wordsStart) >> 2;
			const last = Math.min(words.length, (limit - wordsStart) >> 2);
			// Two words a round while both are plain, then one.
			while (w + 1 < last) {
				const x = words[w] as number;
				const y = words[w + 1] as number;
				const qx = x ^ 0x22222222;
				const sx = x ^ 0x5c5c5c5c;
				const qy = y ^ 0x22222222;
				const sy = y ^ 0x5c5c5c5c;
				if (
					((((qx - 0x01010101) & ~qx) |
						((sx - 0x01010101) & ~sx) |
						((x - 0x20202020) & ~x) |
						((qy - 0x01010101) & ~qy) |
						((sy - 0x01010101) & ~sy) |
						((y - 0x20202020) & ~y)) &
						0x80808080) !==
					0
				)
					break;
				w += 2;
			}
			while (w < last) {
				const x = words[w] as number;
				const q = x ^ 0x22222222;
				const s = x ^ 0x5c5c5c5c;
				if (((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((x - 0x20202020) & ~x)) & 0x80808080) !== 0) break;
				w++;
			}
			i = wordsStart + (w << 2);
		}
		if (i >= limit) return -1;
		const c = b[i] as number;
		if (c === QUOTE) return i + 1;
		if (c === BACKSLASH) {
			const e = b[i + 1];
			if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i += 2;
			else if (e === 0x75) {
				if (i + 6 > limit) return -1;
				for (let k = 2; k < 6; k++) {
					const h = b[i + k] as number;
					if (!((h >= ZERO && h <= NINE) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) return -1;
				}
				i += 6;
			} else return -1;
			continue;
		}
		if (c < 0x20) return -1;
		i++;
	}
}

/** Validates a JSON number at `at`; returns the index after it, or -1. */
function scanNumber(b: Uint8Array, at: number, limit: number): number {
	let i = at;
	if (b[i] === MINUS) i++;
	if (i >= limit) return -1;
	if (b[i] === ZERO) i++;
	else if ((b[i] as number) >= 0x31 && (b[i] as number) <= NINE) while (i < limit && (b[i] as number) >= ZERO && (b[i] as number) <= NINE) i++;
	else return -1;
	if (i < limit && b[i] === DOT) {
		i++;
		const digits = i;
		while (i < limit && (b[i] as number) >= ZERO && (b[i] as number) <= NINE) i++;
		if (i === digits) return -1;
	}
	if (i < limit && (b[i] === 0x65 || b[i] === 0x45)) {
		i++;
		if (i < limit && (b[i] === PLUS || b[i] === MINUS)) i++;
		const digits = i;
		while (i < limit && (b[i] as number) >= ZERO && (b[i] as number) <= NINE) i++;
		if (i === digits) return -1;
	}
	return i;
}
