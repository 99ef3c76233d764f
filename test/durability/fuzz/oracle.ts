/**
 * What the pipeline must do with a (possibly hostile) session file, worked out from its bytes
 * alone and independently of the pipeline's code: which lines are rejected, and which Q&A parts
 * must be found in the archive.
 *
 * A line is rejected exactly when it is terminated (a last line without its newline that does not
 * parse is a torn write: held, neither used nor rejected), not blank, and
 *   1. not valid JSON (bytes decoded as UTF-8, invalid sequences becoming U+FFFD), or
 *   2. not a JSON object, or
 *   3. without a `type` that is a non-empty string, or
 *   4. a `session` header without a non-empty string `id`, or a second header, or
 *   5. an entry whose `id` is present but not a non-empty string, or
 *   6. a `message` entry without a `message` object with a string `role`, or
 *   7. an entry without `id` in a file of version 2 or later (the version is the first header's, or,
 *      before any header, 3 when the first entry has an id and 1 otherwise).
 * Everything else is accepted, on purpose: unknown entry types (kept for the tree), tool results
 * whose content is garbage, texts with U+FFFD or lone surrogates, wrong-typed optional fields
 * (`parentId`, `timestamp`, `stopReason`, `content`: ignored or repaired).
 */

const decoder = new TextDecoder("utf-8");

export interface OracleLine {
	/** 1-based line number in the file. */
	readonly line: number;
	readonly text: string;
	readonly terminated: boolean;
}

export function linesOf(bytes: Uint8Array): OracleLine[] {
	const out: OracleLine[] = [];
	let start = 0;
	let line = 1;
	for (let i = 0; i <= bytes.length; i++) {
		if (i === bytes.length || bytes[i] === 0x0a) {
			if (i === bytes.length && start === i) break;
			out.push({ line, text: decoder.decode(bytes.subarray(start, i)), terminated: i < bytes.length });
			line++;
			start = i + 1;
		}
	}
	return out;
}

const isBlank = (text: string) => /^[ \t\r]*$/.test(text);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown) => typeof v === "string" && v !== "";

export interface Expectation {
	/** Line numbers that must be rejected, exactly. */
	readonly rejected: ReadonlySet<number>;
	/** Q&A parts (`kind|entryId|text`) that must appear in some Q&A of the archive. */
	readonly parts: ReadonlySet<string>;
}

/**
 * `untouched(text)`: whether a line is exactly as in the original file. Parts are expected only
 * from untouched lines of a version-3 file (a mutated line may legitimately change its meaning).
 */
export function expectFrom(bytes: Uint8Array, untouched: (text: string) => boolean): Expectation {
	const rejected = new Set<number>();
	const parts = new Set<string>();
	let headerSeen = false;
	let version: number | undefined;
	for (const l of linesOf(bytes)) {
		if (isBlank(l.text)) continue;
		let value: unknown;
		try {
			value = JSON.parse(l.text);
		} catch {
			if (l.terminated) rejected.add(l.line);
			continue;
		}
		const reject = () => rejected.add(l.line);
		if (!isObject(value) || typeof value.type !== "string" || value.type === "") {
			reject();
			continue;
		}
		if (value.type === "session") {
			if (!isId(value.id) || headerSeen) {
				reject();
				continue;
			}
			headerSeen = true;
			version = typeof value.version === "number" && Number.isFinite(value.version) ? value.version : 1;
			continue;
		}
		if (value.id !== undefined && !isId(value.id)) {
			reject();
			continue;
		}
		if (value.type === "message" && !(isObject(value.message) && typeof value.message.role === "string")) {
			reject();
			continue;
		}
		version ??= value.id === undefined ? 1 : 3;
		if (version >= 2 && value.id === undefined) {
			reject();
			continue;
		}
		if (version >= 3 && value.type === "message" && untouched(l.text)) {
			const part = partOf(value.id as string, value.message as Record<string, unknown>);
			if (part) parts.add(part);
		}
	}
	return { rejected, parts };
}

/** The Q&A part a message line makes: a user input, or an assistant reply without tool calls. */
function partOf(id: string, message: Record<string, unknown>): string | undefined {
	const content = message.content;
	const blocks = Array.isArray(content) ? content.filter(isObject) : [];
	const text =
		typeof content === "string"
			? content
			: blocks
					.filter((b) => b.type === "text" && typeof b.text === "string")
					.map((b) => b.text)
					.join("\n\n");
	if (message.role === "user") return `input|${id}|${text}`;
	if (message.role !== "assistant") return undefined;
	if (blocks.some((b) => b.type === "toolCall") || message.stopReason === "toolUse") return undefined;
	return `reply|${id}|${text}`;
}
