/**
 * The parts of Pi's session file format that pbot reads, trimmed at the edge.
 *
 * Pi's own types live in `@mariozechner/pi-coding-agent` (`SessionHeader`, `SessionEntry`); these
 * are our narrow, defensive view of them: only what Q&A extraction needs survives parsing, so tool
 * results, thinking and images never occupy memory past the line they were read from.
 */

/** The first line of a session file. `cwd` and `parentSession` are paths and never leave the integration layer. */
export interface SessionHeaderLine {
	readonly type: "session";
	readonly line: number;
	/** Missing in version-1 files. */
	readonly version: number;
	readonly id: string;
	readonly timestamp?: string;
	readonly cwd?: string;
	readonly parentSession?: string;
}

/** A message, reduced to what a Q&A can contain. */
export interface MessageLite {
	/** `user`, `assistant`, `toolResult`, `bashExecution`, `custom` (v2 `hookMessage`), … */
	readonly role: string;
	/** User text, or assistant text blocks. Thinking, tool calls and tool output are never kept. */
	readonly text: string;
	readonly images: number;
	/** Number of tool calls in an assistant message. */
	readonly toolCalls: number;
	readonly stopReason?: string;
	readonly error?: string;
	/** `message.timestamp` in ms (queued input keeps its enqueue time here). */
	readonly at?: number;
}

/** Any non-header line, after parsing. Entries of version-1 files have no `id` until normalised. */
export interface EntryLite {
	readonly type: string;
	readonly line: number;
	readonly id?: string;
	/** `null` for a root; `undefined` when absent or not a string (repaired by the tree). */
	readonly parentId?: string | null;
	readonly timestamp?: string;
	readonly message?: MessageLite;
	/** `session_info`: the session's name. */
	readonly name?: string;
	/** `label`: the entry it labels and the label (absent = cleared). */
	readonly targetId?: string;
	readonly label?: string;
}

/** Result of parsing one line. */
export type ParsedLine =
	| { readonly kind: "header"; readonly header: SessionHeaderLine }
	| { readonly kind: "entry"; readonly entry: EntryLite }
	| { readonly kind: "rejected"; readonly line: number; readonly reason: string; readonly bytes?: number }
	/** A last line without its newline that does not parse yet: the rest may still be written. */
	| { readonly kind: "held"; readonly line: number; readonly bytes: number };
