/**
 * Human output fits the terminal's width (`io.columns`; the bin's io: the terminal's width, or
 * `COLUMNS`): tables keep ids and times whole and drop or shorten their other columns, free text is
 * cut with `…`, `read`'s text is wrapped. Without a width (a pipe, a file) lines are whole. Widths
 * are measured with pi-tui's `visibleWidth` (graphemes, East Asian widths, ANSI escapes skipped),
 * not with the function the CLI counts with.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { visibleWidth } from "@mariozechner/pi-tui";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayWidth, truncateToWidth, wrapLine } from "../../src/cli/format.ts";
import { runCli, type CliIo } from "../../src/cli/main.ts";
import type { ReadResult, SearchResult, SessionListResult } from "../../src/services/history/query/types.ts";
import type { IngestReport } from "../../src/services/history/service/historyService.ts";
import type { QaNode, QaPart } from "../../src/services/history/model/types.ts";
import { qaLine } from "../../src/cli/watchCommand.ts";
import { fixtureWorkspace } from "../helpers/workspace.ts";

const exec = promisify(execFile);

interface Run {
	readonly code: number;
	readonly stdout: string;
	readonly stderr: string;
}

async function cli(argv: readonly string[], options: { columns?: number; color?: boolean; cwd?: string } = {}): Promise<Run> {
	let stdout = "";
	let stderr = "";
	const io: CliIo = {
		stdout: (t) => (stdout += t.endsWith("\n") ? t : `${t}\n`),
		stderr: (t) => (stderr += t.endsWith("\n") ? t : `${t}\n`),
		cwd: options.cwd ?? process.cwd(),
		color: options.color ?? false,
		...(options.columns !== undefined ? { columns: options.columns } : {}),
	};
	const code = await runCli(argv, io);
	return { code, stdout, stderr };
}

const lines = (text: string) => text.replace(/\n$/, "").split(/\r?\n/);
const widest = (text: string) => Math.max(...lines(text).map((l) => visibleWidth(l)));
/** Lines wider than `columns`, for a message that shows them. */
const over = (text: string, columns: number) => lines(text).filter((l) => visibleWidth(l) > columns);

/** Every node id the text shows (sessions, summaries, Q&A), as whole tokens. */
function idsIn(text: string): Set<string> {
	const found = text.match(/(?<![\w-])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:qa|s\d+)_[\w-]{20})(?![\w-])/g) ?? [];
	return new Set(found);
}

describe("human output at the terminal's width", () => {
	let ws: Awaited<ReturnType<typeof fixtureWorkspace>>;
	let where: string[];
	beforeAll(async () => {
		ws = await fixtureWorkspace("pbot-columns-");
		const agentDir = join(ws.root, "agent");
		await mkdir(agentDir);
		where = ["-w", ws.workspace, "-s", ws.sessions, "--agent-dir", agentDir];
		expect((await cli(["ingest", ...where])).code).toBe(0);
	});
	afterAll(async () => {
		await ws.cleanup();
	});

	it("sessions: every line fits 80 columns, ids whole (each reads), titles cut with … (CJK counted 2 wide)", async () => {
		const narrow = await cli(["sessions", "--limit", "50", ...where], { columns: 80 });
		expect(narrow.code).toBe(0);
		expect(over(narrow.stdout, 80)).toEqual([]);
		const listed = JSON.parse((await cli(["sessions", "--limit", "50", "--json", ...where])).stdout) as SessionListResult;
		const ids = listed.sessions.map((s) => s.sessionId);
		expect(ids.length).toBe(17);
		expect(idsIn(narrow.stdout)).toEqual(new Set(ids));
		for (const id of ids) {
			const row = lines(narrow.stdout).find((l) => l.includes(id)) as string;
			expect(row).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d {2}/);
			const read = await cli(["read", id, ...where], { columns: 80 });
			expect(read.code, id).toBe(0);
			expect(read.stdout.startsWith(`${id} · session`)).toBe(true);
		}
		// The CJK title: 19 columns left, so 9 ideographs (18 columns) and `…`.
		const cjk = lines(narrow.stdout).find((l) => l.includes("019cc786-6680-7214-abb7-3b96534a3104"));
		expect(cjk).toMatch(/ {2}这个项目的发布负责…$/);
		expect(visibleWidth(cjk as string)).toBe(80);
		expect(lines(narrow.stdout).find((l) => l.includes("019cd1d3-1e80-7389-9875-aee8881e0e25"))).toMatch(/ {2}Question topic-001…$/);
	});

	it("search: hit rows and snippets fit 80 columns (highlight escapes not counted), ids whole, the match in sight", async () => {
		for (const query of ["owner", "the", "负责人", "topic-01"]) {
			const found = JSON.parse((await cli(["search", query, "--limit", "50", "--json", ...where])).stdout) as SearchResult;
			const ids = found.groups.flatMap((g) => g.hits.map((h) => h.id));
			expect(ids.length, query).toBeGreaterThan(0);
			for (const color of [false, true]) {
				const narrow = await cli(["search", query, "--limit", "50", ...where], { columns: 80, color });
				expect(narrow.code).toBe(0);
				expect(over(narrow.stdout, 80), query).toEqual([]);
				expect(widest(narrow.stdout), query).toBeGreaterThan(60);
				const rows = [...narrow.stdout.matchAll(/^ {2}((?:qa|s\d+)_[\w-]{20}) {2}\d{4}-\d\d-\d\d \d\d:\d\d/gm)].map((m) => m[1]);
				expect(rows, query).toEqual(ids);
				// Each snippet line (under its row) still shows the match.
				const snippets = lines(narrow.stdout).filter((l) => l.startsWith("      "));
				expect(snippets.length).toBe(ids.length);
				for (const s of snippets) expect(s.toLowerCase(), query).toContain(color ? `\x1b[1;7m${query}` : query);
			}
		}
		const hit = JSON.parse((await cli(["search", "owner", "--json", ...where])).stdout) as SearchResult;
		for (const id of hit.groups.flatMap((g) => g.hits.map((h) => h.id))) expect((await cli(["read", id, ...where], { columns: 80 })).code).toBe(0);
		// The CJK snippet is cut on a character, at 80 columns counted as a terminal shows them.
		const cjk = await cli(["search", "负责人", ...where], { columns: 80 });
		expect(cjk.stdout).toContain("      这个项目的发布负责人是谁？请用中文回答。 发布负责人是 Dana Whitfield，发…\n");
	});

	it("read: every line fits 80 columns, text wrapped (none of it lost), ids whole", async () => {
		const long = JSON.parse((await cli(["search", "END-OF-LONG-ANSWER", "--json", ...where])).stdout) as SearchResult;
		const unicode = JSON.parse((await cli(["search", "负责人", "--json", ...where])).stdout) as SearchResult;
		const nodes = [
			long.groups[0]?.hits[0]?.id as string,
			unicode.groups[0]?.hits[0]?.id as string,
			"019cc786-6680-7214-abb7-3b96534a3104", // CJK, Korean, emoji in titles and previews
			"019cd1d3-1e80-7389-9875-aee8881e0e25", // 72 Q&A, summaries of three levels
			"019cbd39-ae80-73af-961d-f979f3ca67d6", // five branches
		];
		const body = (text: string) => text.split("─".repeat(40))[1] ?? "";
		for (const id of nodes) {
			const [narrow, full] = [await cli(["read", id, ...where], { columns: 80 }), await cli(["read", id, ...where])];
			expect(narrow.code).toBe(0);
			expect(over(narrow.stdout, 80), id).toEqual([]);
			expect(widest(full.stdout), id).toBeGreaterThan(80);
			// Wrapped, not cut: the same text but for the line breaks and indents.
			expect(body(narrow.stdout).replace(/\s+/g, ""), id).toBe(body(full.stdout).replace(/\s+/g, ""));
			expect(body(narrow.stdout).length).toBeGreaterThan(40);
			const node = JSON.parse((await cli(["read", id, "--json", ...where])).stdout) as ReadResult;
			const shown = idsIn(narrow.stdout);
			expect(shown, id).toEqual(idsIn(full.stdout));
			for (const ref of [node.id, node.sessionId, ...node.parents.map((p) => p.id), ...node.children.map((c) => c.id)]) expect(shown.has(ref), ref).toBe(true);
		}
		const longAnswer = await cli(["read", nodes[0] as string, ...where], { columns: 80 });
		expect(lines(longAnswer.stdout).length).toBeGreaterThan(lines((await cli(["read", nodes[0] as string, ...where])).stdout).length);
	});

	it("ingest: the report fits 80 columns with every session id whole", async () => {
		const fresh = await fixtureWorkspace("pbot-columns-ingest-");
		try {
			const args = ["-w", fresh.workspace, "-s", fresh.sessions, "--agent-dir", join(fresh.root, "agent")];
			const narrow = await cli(["ingest", ...args], { columns: 80 });
			expect(narrow.code).toBe(0);
			expect(over(narrow.stdout, 80)).toEqual([]);
			const report = JSON.parse((await cli(["rebuild", "--json", ...args])).stdout) as IngestReport;
			expect(report.sessions.length).toBe(17);
			expect(idsIn(narrow.stdout)).toEqual(new Set(report.sessions.map((s) => s.sessionId)));
			for (const s of report.sessions) expect(narrow.stdout).toMatch(new RegExp(`^${s.sessionId} +${s.qa} `, "m"));
			expect(narrow.stdout).toMatch(/^total +155 /m);
			// At 120 columns the whole headings fit.
			const wide = await cli(["rebuild", ...args], { columns: 120 });
			expect(over(wide.stdout, 120)).toEqual([]);
			expect(wide.stdout).toMatch(/^session +Q&A {2}incomplete {2}branches {2}planned L1\/L2\/… {2}rejected lines$/m);
			expect(narrow.stdout).not.toContain("rejected lines");
			expect(wide.stdout).not.toContain("Not shown at this width");
			// Narrower, columns go: their totals are still said under the table.
			const rejected = report.sessions.reduce((n, s) => n + s.rejectedLines, 0);
			const incomplete = report.sessions.reduce((n, s) => n + s.incomplete, 0);
			const at50 = await cli(["rebuild", ...args], { columns: 50 });
			expect(over(at50.stdout, 50)).toEqual([]);
			expect(at50.stdout).not.toMatch(/^session +Q&A +open/m);
			expect(at50.stdout.replace(/\n/g, " ")).toMatch(
				new RegExp(
					`Not shown at this width \\(totals\\): incomplete ${incomplete}, branches \\d+, planned L1/L2/… [\\d/]+, rejected lines ${rejected}; --json has every column\\.`,
				),
			);
		} finally {
			await fresh.cleanup();
		}
	});

	it("shows more at 120 columns than at 80, and whole lines without a width (a pipe), as before", async () => {
		const [at80, at120] = [
			await cli(["sessions", "--limit", "50", ...where], { columns: 80 }),
			await cli(["sessions", "--limit", "50", ...where], { columns: 120 }),
		];
		expect(over(at120.stdout, 120)).toEqual([]);
		expect(widest(at120.stdout)).toBeGreaterThan(100);
		expect(lines(at120.stdout)[2]).toMatch(/^last activity +session \(read it by this id\) +Q&A {2}details +title$/);
		expect(lines(at80.stdout)[2]).toMatch(/^last activity +session \(read it by this id\) +Q&A {2}title$/);
		// Branches, incomplete Q&A and summaries, said briefly; whole titles where they fit.
		expect(at120.stdout).toMatch(/^2026-03-10 09:08 {2}019cd6f9-7a80-7336-868a-53a4094e3e47 {3}22 {2}3 br · 0\/5 sum {2}Prefix question 01: describe/m);
		expect(at120.stdout).toMatch(/019cc786-6680-7214-abb7-3b96534a3104 .* {2}这个项目的发布负责人是谁？请用中文回答。$/m);
		expect(at120.stdout).toMatch(/019cdc24-5a6a-764e-9258-9d5d73d7056e .* 1 open +Version bump planning$/m);

		const [search80, search120] = [await cli(["search", "owner", ...where], { columns: 80 }), await cli(["search", "owner", ...where], { columns: 120 })];
		expect(over(search120.stdout, 120)).toEqual([]);
		// (The fixture's legacy copy shares the title: each row's title follows the end of its session id.)
		expect(search120.stdout).toMatch(/ {2}…\w{4} Step 1: read hello\.sh and explain it in detail\./);
		expect(search80.stdout).not.toContain("Step 1: read hello.sh and explain it in detail.");

		const [read80, read120] = [
			await cli(["read", "019cd1d3-1e80-7389-9875-aee8881e0e25", ...where], { columns: 80 }),
			await cli(["read", "019cd1d3-1e80-7389-9875-aee8881e0e25", ...where], { columns: 120 }),
		];
		expect(over(read120.stdout, 120)).toEqual([]);
		expect(read120.stdout).toMatch(/^ {2}id +kind +time \(UTC\) +preview$/m);
		expect(read80.stdout).toMatch(/^ {2}id +kind +time \(UTC\)$/m);

		// Without a width: every column, every title and snippet whole.
		const sessions = await cli(["sessions", "--limit", "50", ...where]);
		expect(lines(sessions.stdout)[2]).toBe("last activity     session (read it by this id)          Q&A  branches  incomplete  summaries ready/pending  title");
		expect(sessions.stdout).toContain(
			"2026-03-09 09:36  019cd1d3-1e80-7389-9875-aee8881e0e25   72         1           0  0/23                     Question topic-001: what is the status of modul…\n",
		);
		const search = await cli(["search", "owner", ...where]);
		expect(search.stdout).toContain(
			"      What is in notes.txt? notes.txt is the release notes draft: owner Dana Whitfield, release day Friday, no blockers.\n",
		);
		const ingest = await cli(["ingest", ...where]);
		expect(ingest.stdout).toMatch(/^session +Q&A {2}incomplete {2}branches {2}planned L1\/L2\/… {2}rejected lines$/m);
	});

	describe("the bin", () => {
		const bin = join(process.cwd(), "bin", "pbot-history.cjs");
		const built = existsSync(join(process.cwd(), "dist", "cli-bundle", "cli.cjs"));
		const env = (extra: Record<string, string>) => {
			const { COLUMNS: _, ...rest } = process.env;
			return { ...rest, NO_COLOR: "1", ...extra };
		};

		it.skipIf(!built)("writes whole lines to a pipe, and fits them to COLUMNS when the environment sets it", async () => {
			for (const argv of [
				["sessions", "--limit", "50", ...where],
				["search", "owner", ...where],
				["read", "019cc786-6680-7214-abb7-3b96534a3104", ...where],
			]) {
				const piped = await exec(process.execPath, [bin, ...argv], { env: env({}) });
				expect(piped.stdout, argv[0]).toBe((await cli(argv)).stdout);
				const columns = await exec(process.execPath, [bin, ...argv], { env: env({ COLUMNS: "80" }) });
				expect(columns.stdout, argv[0]).toBe((await cli(argv, { columns: 80 })).stdout);
				expect(over(columns.stdout, 80)).toEqual([]);
			}
		});

		it.skipIf(!built || !existsSync("/usr/bin/script"))("fits a terminal's width (a pseudo-terminal 80 columns wide)", async () => {
			const quoted = [bin, "sessions", "--limit", "50", ...where].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
			const run = await exec("script", ["-qc", `stty cols 80; ${JSON.stringify(process.execPath)} ${quoted}`, "/dev/null"], { env: env({}) });
			const out = run.stdout.replace(/\r/g, "");
			expect(out).toContain("Sessions 1–17 of 17");
			expect(over(out, 80)).toEqual([]);
			expect(out).toContain("019cc786-6680-7214-abb7-3b96534a3104    5  这个项目的发布负责…");
		});
	});
});

describe("widths and fitting (src/cli/format.ts)", () => {
	it("demo: its tables and texts fit the terminal too (only the paths and the commands it shows stay whole, to be copied)", async () => {
		const at = (columns?: number) => cli(["demo"], columns === undefined ? {} : { columns });
		const narrow = await at(80);
		expect(narrow.code).toBe(0);
		const whole = (line: string) => line.startsWith("$ pbot-history ") || /^(Demo workspace|Copied \d+ sample|Removed the demo workspace) /.test(line);
		expect(over(narrow.stdout, 80).filter((l) => !whole(l))).toEqual([]);
		// Without a width (a pipe), the ingest table has its whole headings, wider than 80.
		const piped = await at();
		expect(over(piped.stdout, 80).filter((l) => !whole(l)).length).toBeGreaterThan(0);
		expect(narrow.stdout).toContain("Removed the demo workspace ");
		expect(idsIn(narrow.stdout)).toEqual(idsIn(piped.stdout));
	});

	it("watch: a Q&A's line fits the terminal, its id whole, question and answer sharing the room (on the next line, or lines of their own, when narrow)", () => {
		const qa = (question: string, answer: string | undefined, completed = true): QaNode => ({
			kind: "qa",
			id: "qa_IwbO3Y0GbgiZUbqXmjfG",
			sessionId: "019766de-d2c7-7284-8b7a-ead5bb345566",
			parts: [{ kind: "input", text: question } as QaPart, ...(answer === undefined ? [] : [{ kind: "reply", text: answer } as QaPart])],
			entryIds: ["a1"],
			startedAt: "2026-04-01T10:00:00.000Z",
			endedAt: "2026-04-01T10:02:00.000Z",
			completed,
		});
		const long = qa(`Who owns the release of ${"the new build ".repeat(10)}?`, `Dana Whitfield owns it: ${"发布负责人是 ".repeat(20)}`);
		// Without a width (a pipe): as before, 60 columns of each.
		expect(qaLine(long)).toMatch(
			/^2026-04-01 10:02 {2}qa_IwbO3Y0GbgiZUbqXmjfG {2}Q: Who owns the release of the new build .*… {2}→ {2}A: Dana Whitfield owns it: .*…$/,
		);
		for (const columns of [200, 120, 80, 60, 40, 20]) {
			const line = qaLine(long, columns);
			for (const l of line.split("\n")) expect(visibleWidth(l), `${columns}: ${l}`).toBeLessThanOrEqual(columns);
			if (columns >= 20 + 23) expect(line).toContain("qa_IwbO3Y0GbgiZUbqXmjfG");
			expect(line).toMatch(/Q: Who/);
			expect(line).toMatch(/A: Dana/);
		}
		expect(qaLine(long, 120).split("\n")).toHaveLength(1);
		expect(qaLine(long, 80).split("\n")).toHaveLength(2);
		expect(qaLine(long, 30).split("\n")).toHaveLength(3);
		// What a short question does not need goes to the answer.
		const short = qaLine(qa("Who?", `Dana Whitfield owns it, ${"and more ".repeat(20)}`), 120);
		expect(visibleWidth(short)).toBe(120);
		expect(short).toContain("Q: Who?  →  A: Dana Whitfield owns it, and more");
		// An open Q&A without its answer yet: the question has the room.
		const open = qaLine(qa("Build the project", undefined, false), 80);
		expect(open).toBe("2026-04-01 10:02  qa_IwbO3Y0GbgiZUbqXmjfG (open)  Q: Build the project");
	});

	it("counts East Asian wide characters and emoji 2, combining marks and joiners 0, colour escapes nothing", () => {
		for (const text of [
			"abc",
			"这个项目",
			"한국어",
			"ｆｕｌｌ",
			"e\u0301te\u0301",
			"🎉",
			"👍🏽",
			"👨‍👩‍👧",
			"🇫🇷",
			"❤️",
			"café — thanks",
			"\x1b[1;7mowner\x1b[22;27m",
			"𝒜𝒸𝓂ℯ 𠜎𠜱 𝄞",
		])
			expect(displayWidth(text), text).toBe(visibleWidth(text));
	});

	it("cuts text to a width with … on a whole character", () => {
		expect(truncateToWidth("这个项目的发布负责人", 9)).toBe("这个项目…");
		expect(truncateToWidth("这个项目的发布负责人", 10)).toBe("这个项目…");
		expect(truncateToWidth("Say hi.", 7)).toBe("Say hi.");
		expect(truncateToWidth("Greeting script check", 12)).toBe("Greeting sc…");
		expect(truncateToWidth("e\u0301e\u0301e\u0301e\u0301", 3)).toBe("e\u0301e\u0301…");
		expect(truncateToWidth("👨‍👩‍👧👨‍👩‍👧", 3)).toBe("👨‍👩‍👧…");
	});

	it("wraps at spaces, never breaks a word that fits a line, and breaks CJK and over-long words", () => {
		expect(wrapLine("Source: session 019cc786-6680-7214-abb7-3b96534a3104, entries 401547db, be92bedd", 40, "        ")).toEqual([
			"Source: session",
			"019cc786-6680-7214-abb7-3b96534a3104,",
			"        entries 401547db, be92bedd",
		]);
		expect(wrapLine("- item one two three four", 12)).toEqual(["- item one", "  two three", "  four"]);
		const cjk = wrapLine("发布负责人是 Dana Whitfield，发布日期是星期五。🎉", 16);
		expect(cjk).toEqual(["发布负责人是", "Dana Whitfield，", "发布日期是星期五", "。🎉"]);
		for (const line of cjk) expect(visibleWidth(line)).toBeLessThanOrEqual(16);
		expect(wrapLine("x".repeat(25), 10)).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
		expect(wrapLine("\tindented\ttext", 80)).toEqual(["        indented        text"]);
	});
});
