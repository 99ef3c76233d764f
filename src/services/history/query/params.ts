/**
 * Validation of query parameters. The tool receives them from a model and the CLI from a person,
 * so nothing is trusted: each parser takes `unknown`, returns a clean value or throws a
 * `QueryError` naming the parameter. Absent means `undefined`, `null` or (for strings) `""`.
 */
import { isValidId } from "../model/ids.ts";
import type { QueryView } from "../projections/queryView.ts";
import { badParameter, unknownId } from "./errors.ts";

/** `search` hits and sessions per page: default and maximum. */
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 50;
/** `read` body slice in UTF-16 code units: default and maximum. */
export const READ_DEFAULT_LIMIT = 12_000;
export const READ_MAX_LIMIT = 24_000;
/** Children listed per page by `read`. */
export const CHILDREN_PAGE_SIZE = 20;

/** An inclusive time window in epoch milliseconds; an absent side is open. */
export interface TimeWindow {
	readonly fromMs?: number;
	readonly toMs?: number;
}

/** A validated page request. `clamped` is true when the asked limit was above the maximum. */
export interface PageRequest {
	readonly offset: number;
	readonly limit: number;
	readonly clamped: boolean;
}

function isAbsent(value: unknown): value is undefined | null | "" {
	return value === undefined || value === null || value === "";
}

/** A value quoted for a message, never longer than a line. */
export function quote(value: unknown): string {
	const text = typeof value === "string" ? JSON.stringify(value) : typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
	return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/** The search text: surrounding whitespace trimmed, inner whitespace kept as written. */
export function parseQueryText(value: unknown): string {
	if (value === undefined || value === null) return "";
	if (typeof value !== "string") throw badParameter("query", `must be a string (got ${quote(value)})`);
	return value.trim();
}

/** A non-negative integer, or its decimal string (as the CLI passes it); `undefined` when absent. */
export function parseNonNegativeInteger(name: string, value: unknown): number | undefined {
	if (isAbsent(value)) return undefined;
	if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
	if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) {
		const n = Number(value);
		if (Number.isSafeInteger(n)) return n;
		// An integer, only one no count could reach.
		throw badParameter(name, `is too large (at most ${Number.MAX_SAFE_INTEGER}; got ${quote(value)})`);
	}
	throw badParameter(name, `must be a non-negative integer (got ${quote(value)})`);
}

/** Where the last page of `total` items starts, `limit` a page (`total` and `limit` above 0): what to say to an offset past the end. */
export function lastPageOffset(total: number, limit: number): number {
	return Math.floor((total - 1) / limit) * limit;
}

/** `offset` and `limit`: the limit defaults to `defaultLimit` and is clamped to `maxLimit`. */
export function parsePage(offset: unknown, limit: unknown, options: { readonly defaultLimit: number; readonly maxLimit: number }): PageRequest {
	const o = parseNonNegativeInteger("offset", offset) ?? 0;
	const asked = parseNonNegativeInteger("limit", limit) ?? options.defaultLimit;
	return { offset: o, limit: Math.min(asked, options.maxLimit), clamped: asked > options.maxLimit };
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE_HELP = "use YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS[.sss]] followed by Z or an offset such as +01:00";

/**
 * One ISO-8601 instant in epoch milliseconds. `Date.parse` is not used to validate: it accepts
 * junk (`"2026-02-30"` rolls over to March, `"1"` is a year). A date without a time is a whole
 * UTC day: `edge: "start"` gives its first millisecond (for `from`), `edge: "end"` its last (for
 * `to`). A date-time needs `Z` or an offset: a local time would mean different things on
 * different machines.
 */
export function parseInstant(name: string, value: unknown, edge: "start" | "end"): number | undefined {
	if (isAbsent(value)) return undefined;
	if (typeof value !== "string") throw badParameter(name, `must be an ISO-8601 date or date-time string (got ${quote(value)})`);
	const text = value.trim();
	const notIso = () => badParameter(name, `${quote(value)} is not an ISO-8601 date or date-time (${DATE_HELP})`);
	const dateOnly = DATE_ONLY.exec(text);
	if (dateOnly) {
		const start = utcMs(Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3]), 0, 0, 0, 0);
		if (start === undefined) throw notIso();
		return edge === "start" ? start : start + 86_400_000 - 1;
	}
	const m = DATE_TIME.exec(text);
	if (!m) throw notIso();
	const [, y, mo, d, h, mi, s, frac, zone] = m;
	if (zone === undefined) throw badParameter(name, `${quote(value)} has no time zone; add Z (UTC) or an offset such as +01:00`);
	const hours = Number(h);
	const minutes = Number(mi);
	const seconds = s === undefined ? 0 : Number(s);
	if (hours > 23 || minutes > 59 || seconds > 59) throw notIso();
	const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, "0"));
	const base = utcMs(Number(y), Number(mo), Number(d), hours, minutes, seconds, ms);
	if (base === undefined) throw notIso();
	return base - zoneOffsetMinutes(zone, notIso) * 60_000;
}

function zoneOffsetMinutes(zone: string, fail: () => Error): number {
	if (zone === "Z" || zone === "z") return 0;
	const digits = zone.slice(1).replace(":", "");
	const hh = Number(digits.slice(0, 2));
	const mm = Number(digits.slice(2, 4));
	if (hh > 23 || mm > 59) throw fail();
	return (zone.startsWith("-") ? -1 : 1) * (hh * 60 + mm);
}

/** Epoch ms of a UTC calendar time, or `undefined` when the day does not exist (2026-02-30). */
function utcMs(year: number, month: number, day: number, h: number, mi: number, s: number, ms: number): number | undefined {
	if (month < 1 || month > 12 || day < 1) return undefined;
	const date = new Date(0);
	// setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
	date.setUTCFullYear(year, month - 1, day);
	if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
	date.setUTCHours(h, mi, s, ms);
	return date.getTime();
}

/** `from` and `to` as an inclusive window; `from` after `to` is an error. */
export function parseTimeWindow(from: unknown, to: unknown): TimeWindow {
	const fromMs = parseInstant("from", from, "start");
	const toMs = parseInstant("to", to, "end");
	if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) throw badParameter("from", `${quote(from)} is after to ${quote(to)}`);
	return { ...(fromMs !== undefined ? { fromMs } : {}), ...(toMs !== undefined ? { toMs } : {}) };
}

/** Whether [startMs, endMs] intersects the window (both ends inclusive). */
export function intersects(window: TimeWindow, startMs: number, endMs: number): boolean {
	if (window.fromMs !== undefined && endMs < window.fromMs) return false;
	if (window.toMs !== undefined && startMs > window.toMs) return false;
	return true;
}

/** Whether a session (or node) id names one of this workspace: the view's, or the text projection's. */
export type IdExists = (id: string) => boolean;

/** An optional session filter: must be a session of this workspace. */
export function parseSessionFilter(exists: IdExists | QueryView, value: unknown): string | undefined {
	if (isAbsent(value)) return undefined;
	if (typeof value !== "string") throw badParameter("sessionId", `must be a string (got ${quote(value)})`);
	const id = value.trim();
	if (!isValidId(id)) throw badParameter("sessionId", `${quote(value)} is not a valid session id`);
	const known = typeof exists === "function" ? exists(id) : exists.state.sessions[id] !== undefined;
	if (!known) throw unknownId("sessionId", `unknown session ${quote(id)}`);
	return id;
}

/** A required node id, well-formed; whether it names a node is `parseNodeId`'s (or the caller's) question. */
export function parseNodeIdSyntax(value: unknown): string {
	if (isAbsent(value)) throw badParameter("id", "is required (a session, summary or Q&A id from search or navigation)");
	if (typeof value !== "string") throw badParameter("id", `must be a string (got ${quote(value)})`);
	const id = value.trim();
	if (!isValidId(id)) throw badParameter("id", `${quote(value)} is not a valid node id`);
	return id;
}

/** The error for a well-formed id that names no node of this workspace. */
export function unknownNode(id: string): Error {
	return unknownId("id", `unknown node ${quote(id)}`);
}

/** A required node id: a session root, a summary or a Q&A of this workspace. */
export function parseNodeId(view: QueryView, value: unknown): string {
	const id = parseNodeIdSyntax(value);
	if (!view.nodes.has(id)) throw unknownNode(id);
	return id;
}
