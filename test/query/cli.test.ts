import { cp, mkdtemp, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli, type CliIo } from "../../src/cli/main.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import type { ReadResult, SearchResult, SessionListResult } from "../../src/services/history/query/types.ts";
import { fixtureFile, fixtureSessionId, fixtureWorkspace } from "./helpers.ts";
import { header, jsonl, reply, user } from "../helpers/entries.ts";

interface Run {
	readonly code: number;
	readonly stdout: string;
	readonly stderr: string;
}

async function cli(argv: readonly string[], options: { color?: boolean } = {}): Promise<Run> {
	let stdout = "";
	let stderr = "";
	const io: CliIo = {
		stdout: (t) => (stdout += t.endsWith("\n") ? t : `${t}\n`),
		stderr: (t) => (stderr += t.endsWith("\n") ? t : `${t}\n`),
		cwd: tmpdir(),
		color: options.color ?? false,
	};
	const code = await runCli(argv, io);
	return { code, stdout, stderr };
}

describe("CLI sessions | search | read", () => {
	let ws: Awaited<ReturnType<typeof fixtureWorkspace>>;
	let where: string[];
	const service = () => openWorkspaceHistory({ workspace: ws.workspace, sessionDirs: [ws.sessions], agentDir: ws.agentDir });

	beforeAll(async () => {
		ws = await fixtureWorkspace(["steer-followup-abort", "many-qa-72", "unicode-image", "fork-source", "fork"]);
		where = ["--workspace", ws.workspace, "--sessions", ws.sessions, "--agent-dir", ws.agentDir];
	});

	it("tells apart hits of sessions that share a title (a fork and its source): the end of each one's id before the title", async () => {
		const json = JSON.parse((await cli(["search", "the", "--limit", "50", "--json", ...where])).stdout) as SearchResult;
		const hits = json.kind === "hits" ? json.groups.flatMap((g) => g.hits) : [];
		const titles = new Map<string, Set<string>>();
		for (const h of hits) titles.set(h.sessionTitle, (titles.get(h.sessionTitle) ?? new Set()).add(h.sessionId));
		const shared = hits.filter((h) => (titles.get(h.sessionTitle)?.size ?? 0) > 1);
		expect(shared.length).toBeGreaterThan(1);
		const text = (await cli(["search", "the", "--limit", "50", ...where])).stdout;
		for (const h of shared) expect(text).toMatch(new RegExp(`^  ${h.id} .* …\\w*${h.sessionId.slice(-4)} `, "m"));
		// A title no other session on the page has is shown alone.
		const alone = hits.find((h) => (titles.get(h.sessionTitle)?.size ?? 0) === 1);
		if (alone) expect(text).not.toMatch(new RegExp(`^  ${alone.id} .* …\\w*${alone.sessionId.slice(-4)} `, "m"));
	});

	it("says on stderr, not in its --json output, that the search text was rebuilt from the archives", async () => {
		await cli(["sessions", ...where]);
		await rm(join(ws.workspace, ".pi", "pbot", "text"), { recursive: true });
		const search = await cli(["search", "topic-01", ...where, "--json"]);
		expect(search.code).toBe(0);
		expect(search.stderr).toMatch(/^warning: search text rebuilt from the archives \(\d+ missing\)$/m);
		expect(JSON.parse(search.stdout)).toEqual(await service().search({ query: "topic-01" }));
		expect((await cli(["search", "topic-01", ...where])).stderr).toBe("");
	});

	it("echoes a long query cut, with its length, and a query with a newline on one line, as typed; --json keeps it whole", async () => {
		const pasted = `${"flamingo ".repeat(20)}🦩`;
		const cut = await cli(["search", pasted, ...where]);
		expect(cut.code).toBe(0);
		expect(cut.stdout.split("\n")[0]).toBe(
			`No hits for "${Array.from(pasted).slice(0, 80).join("")}…" (181 characters). Matching is by shared text: try another wording.`,
		);
		expect((JSON.parse((await cli(["search", pasted, ...where, "--json"])).stdout) as SearchResult).query).toBe(pasted);
		const twoLines = await cli(["search", "topic-01\nx", ...where]);
		expect(twoLines.stdout.split("\n")[0]).toBe('No hits for "topic-01␊x". Matching is by shared text: try another wording.');
		const path = await cli(["search", "C:\\temp\\nowhere", ...where]);
		expect(path.stdout.split("\n")[0]).toBe('No hits for "C:\\temp\\nowhere". Matching is by shared text: try another wording.');
		const hit = await cli(["search", "topic-01", ...where]);
		expect(hit.stdout.split("\n")[0]).toMatch(/^Hits for "topic-01": 1–\d+ of \d+ \(times in UTC\)$/);
	});

	it("says why a page is empty: a count asked with --limit 0, or an offset past the end (and where the last page starts)", async () => {
		const count = await cli(["search", "topic-01", ...where, "--limit", "0"]);
		expect(count.stdout.trim()).toBe('10 hit(s) for "topic-01"; none listed (--limit 0 counts only).');
		const past = await cli(["search", "topic-01", ...where, "--offset", "40", "--limit", "4"]);
		expect(past.stdout.trim()).toBe('10 hit(s) for "topic-01"; none from --offset 40: the last page starts at --offset 8.');
		const sessions = await cli(["sessions", ...where, "--offset", "9"]);
		expect(sessions.stdout.trim()).toBe("5 session(s); none from --offset 9: the last page starts at --offset 0.");
		expect((await cli(["sessions", ...where, "--limit", "0"])).stdout.trim()).toBe("5 session(s); none listed (--limit 0 counts only).");
		const read = await cli(["read", fixtureSessionId("many-qa-72"), ...where, "--children-offset", "50"]);
		expect(read.stdout).toMatch(/^Children: \d+; none from --children-offset 50: the last page starts at --children-offset 0\.$/m);
		expect(read.stdout).not.toMatch(/^Children 0 of/m);
	});

	it("prints with --json exactly the object the service returns", async () => {
		const sessions = await cli(["sessions", ...where, "--limit", "2", "--json"]);
		expect(sessions.code).toBe(0);
		expect(JSON.parse(sessions.stdout)).toEqual(await service().sessions({ limit: 2 }));

		const search = await cli(["search", "topic-01", ...where, "--offset", "3", "--limit", "4", "--from", "2026-03-09", "--json"]);
		expect(search.code).toBe(0);
		const expected = (await service().search({ query: "topic-01", offset: 3, limit: 4, from: "2026-03-09" })) as SearchResult;
		expect(JSON.parse(search.stdout)).toEqual(expected);
		expect(expected.total).toBe(10);

		const id = fixtureSessionId("many-qa-72");
		const read = await cli(["read", id, ...where, "--limit", "50", "--children-offset", "1", "--json"]);
		expect(read.code).toBe(0);
		expect(JSON.parse(read.stdout)).toEqual(await service().read({ id, limit: 50, childrenOffset: 1 }));

		const scoped = await cli(["search", "VERSION", ...where, "--session", fixtureSessionId("fork"), "--to", "2026-03-11T23:00:00+01:00", "--json"]);
		expect(JSON.parse(scoped.stdout)).toEqual(
			await service().search({ query: "VERSION", sessionId: fixtureSessionId("fork"), to: "2026-03-11T23:00:00+01:00" }),
		);
	});

	it("does the main job: list sessions, search a word, read a hit and one of its children", async () => {
		const sessions = JSON.parse((await cli(["sessions", ...where, "--json"])).stdout) as SessionListResult;
		expect(sessions.total).toBe(5);
		const hits = JSON.parse((await cli(["search", "shell script", ...where, "--json"])).stdout) as SearchResult;
		const hit = hits.groups[0]?.hits[0];
		expect(hit?.kind).toBe("qa");
		const node = JSON.parse((await cli(["read", hit?.id as string, ...where, "--json"])).stdout) as ReadResult;
		expect(node.body).toContain("hello.sh is the only shell script.");
		const parent = JSON.parse((await cli(["read", node.parents[0]?.id as string, ...where, "--json"])).stdout) as ReadResult;
		expect(parent.children.map((c) => c.id)).toContain(hit?.id);
		const child = await cli(["read", parent.children[0]?.id as string, ...where]);
		expect(child.code).toBe(0);
		expect(child.stdout).toContain("## Question");
	});

	it("says why read shows nothing: an offset past the end, or --limit 0 (never quoting an offset that was not typed)", async () => {
		const id = fixtureSessionId("many-qa-72");
		const { totalLength } = JSON.parse((await cli(["read", id, ...where, "--json"])).stdout) as ReadResult;
		const past = await cli(["read", id, ...where, "--offset", String(totalLength + 5000)]);
		expect(past.code).toBe(0);
		expect(past.stdout).toContain(`(--offset is past the end: the text is ${totalLength} characters long)`);
		expect(past.stdout).not.toContain("Characters "); // no "Characters 115–115 of 115." after it
		const none = await cli(["read", id, ...where, "--limit", "0"]);
		expect(none.stdout).toContain(`(nothing shown with --limit 0: the text is ${totalLength} characters long)`);
	});

	it("names the filters given when nothing matches them, the likelier cause than the words", async () => {
		const hits = await cli(["search", "shell script", ...where, "--from", "2099-01-01"]);
		expect(hits.code).toBe(0);
		expect(hits.stdout).toContain('No hits for "shell script" with --from 2099-01-01: widen or drop the filter');
		const sessions = await cli(["sessions", ...where, "--to", "2000-01-01"]);
		expect(sessions.stdout).toContain("No sessions with --to 2000-01-01: widen or drop the filter.");
		expect((await cli(["search", "zqxj-nowhere", ...where])).stdout).toContain("Matching is by shared text: try another wording.");
	});

	it("prints aligned columns and highlights the match only when color is on", async () => {
		const plain = await cli(["search", "shell SCRIPT", ...where]);
		expect(plain.code).toBe(0);
		expect(plain.stdout).not.toContain("\x1b[");
		expect(plain.stdout).toContain("hello.sh is the only shell script.");
		const lines = plain.stdout.split("\n");
		const head = lines.find((l) => l.trim().startsWith("id "));
		const row = lines.find((l) => l.trim().startsWith("qa_"));
		expect(head?.indexOf("time")).toBe(row?.indexOf("2026-"));
		const colored = await cli(["search", "shell SCRIPT", ...where], { color: true });
		expect(colored.stdout).toContain("\x1b[1;7mshell script\x1b[22;27m");

		const sessions = await cli(["sessions", ...where]);
		expect(sessions.stdout).toMatch(/last activity +session/);
		expect(sessions.stdout).toContain(fixtureSessionId("many-qa-72"));
	});

	it("exits 2 with a message naming the flag for bad arguments and unknown ids", async () => {
		const bad = [
			[["search", "x", "--limit", "-1"], "--limit: must be a non-negative integer"],
			[["search", "x", "--limit", "abc"], "--limit: must be a non-negative integer"],
			[["sessions", "--from", "2026-13-01"], '--from: "2026-13-01" is not an ISO-8601 date'],
			[["search", "x", "--from", "2026-03-02", "--to", "2026-03-01"], "--from: "],
			[["search", "x", "--session", "0190aaaa-0000-7000-8000-00000000dead"], '--session: unknown session "0190aaaa-0000-7000-8000-00000000dead"'],
			[["read", "qa_AAAAAAAAAAAAAAAAAAAA"], '<id>: unknown node "qa_AAAAAAAAAAAAAAAAAAAA"'],
			[["read", "not an id"], "<id>: "],
			[["read", fixtureSessionId("fork"), "--children-offset", "-2"], "--children-offset: must be a non-negative integer"],
		] as const;
		for (const [argv, message] of bad) {
			const run = await cli([...argv, ...where]);
			expect(run.code, argv.join(" ")).toBe(2);
			expect(run.stderr).toContain(`pbot-history: ${message}`);
			expect(run.stdout).toBe("");
		}
		expect((await cli(["search", ...where])).code).toBe(2); // missing <text>
	});

	it("lists sessions when the search text is blank, as the tool does", async () => {
		const run = await cli(["search", "  ", ...where, "--json"]);
		expect(JSON.parse(run.stdout)).toEqual(await service().sessions());
	});

	it("answers an empty workspace with an empty list and exit code 0", async () => {
		const workspace = await mkdtemp(join(tmpdir(), "pbot-cli-empty-"));
		await mkdir(join(workspace, "sessions"));
		const empty = ["--workspace", workspace, "--sessions", join(workspace, "sessions"), "--agent-dir", join(workspace, "agent")];
		const human = await cli(["sessions", ...empty]);
		expect(human).toMatchObject({ code: 0, stderr: "" });
		expect(human.stdout).toContain("No sessions found.");
		const json = await cli(["search", "anything", ...empty, "--json"]);
		expect(json.code).toBe(0);
		expect(JSON.parse(json.stdout)).toMatchObject({ kind: "hits", total: 0, groups: [] });
	});

	it("says where it looked when the workspace has no session at all, and only then", async () => {
		const workspace = await mkdtemp(join(tmpdir(), "pbot-cli-nothing-"));
		const agentDir = join(workspace, "agent");
		const sessions0 = await fixtureWorkspace(["tools-thinking"]);
		// Pi's own folder for the workspace (no --sessions), which Pi has not made.
		const piFolder = join(agentDir, "sessions", `--${workspace.replace(/^\//, "").replace(/\//g, "-")}--`);
		for (const command of [["sessions"], ["search", "owner"], ["ingest"]]) {
			const run = await cli([...command, "--workspace", workspace, "--agent-dir", agentDir]);
			expect(run.code).toBe(0);
			expect(run.stdout).toContain(`The history of ${workspace} is empty: Pi keeps this folder's sessions in ${piFolder} (not there).`);
			expect(run.stdout).toContain("--sessions DIR");
		}
		// Folders named with --sessions, one empty and one missing.
		await mkdir(join(workspace, "empty"));
		const named = await cli(["search", "owner", "--workspace", workspace, "--sessions", join(workspace, "empty"), "--agent-dir", agentDir]);
		expect(named.stdout).toContain(`The history of ${workspace} is empty: no Pi sessions in ${join(workspace, "empty")}.`);
		// Run in a subfolder of the folder Pi ran in: that folder is named.
		await mkdir(join(workspace, "src", "deep"), { recursive: true });
		await mkdir(piFolder, { recursive: true });
		await cp(join(sessions0.sessions, fixtureFile("tools-thinking")), join(piFolder, fixtureFile("tools-thinking")));
		const deep = await cli(["sessions", "--workspace", join(workspace, "src", "deep"), "--agent-dir", agentDir]);
		expect(deep.stdout).toContain(`Pi has sessions for ${workspace}, a folder above this one: run pbot-history there, or pass --workspace ${workspace}.`);
		// `--sessions` naming the folder of every workspace's folder (as ~/.pi/agent/sessions is).
		const parent = await cli(["sessions", "--workspace", workspace, "--sessions", join(agentDir, "sessions"), "--agent-dir", agentDir]);
		expect(parent.stdout).toContain(`${join(agentDir, "sessions")} holds no session files itself, but a folder in it does`);
		expect(parent.stdout).toContain(`Name the one to read: ${piFolder}.`);
		// JSON is the service's answer alone; a history with sessions gets no note, whatever the words found.
		const json = await cli(["search", "owner", "--workspace", workspace, "--agent-dir", agentDir, "--json"]);
		expect(JSON.parse(json.stdout)).toMatchObject({ kind: "hits", total: 0 });
		const none = await cli(["search", "zqxjv-nowhere", "--workspace", sessions0.workspace, "--sessions", sessions0.sessions, "--agent-dir", agentDir]);
		expect(none.stdout).toContain('No hits for "zqxjv-nowhere"');
		expect(none.stdout).not.toContain("history of");
		await rm(workspace, { recursive: true, force: true });
		await rm(sessions0.workspace, { recursive: true, force: true });
	});
});

describe("pbot-history demo", () => {
	it("ingests the bundled sessions, then lists, searches, reads a hit, its parent and one of the parent's children", async () => {
		const workspace = await mkdtemp(join(tmpdir(), "pbot-demo-test-"));
		const run = await cli(["demo", "--keep", workspace, "--query", "owner"]);
		expect(run.code).toBe(0);
		const steps = run.stdout.split("\n").filter((l) => l.startsWith("$ pbot-history "));
		expect(steps.map((l) => l.split(" ")[2])).toEqual(["sessions", "search", "read", "read", "read"]);
		expect(run.stdout).toContain('Hits for "owner"');
		expect(run.stdout).toMatch(/^Children 1–\d+ of \d+:/m);
		// Each step's id is one the step before printed.
		const ids = steps.slice(2).map((l) => l.split(" ")[3] as string);
		const before = (id: string) => run.stdout.slice(0, run.stdout.indexOf(`$ pbot-history read ${id}`));
		for (const id of ids) expect(before(id)).toContain(id);
	});
});

describe("CLI options given an empty value", () => {
	it("exit 2 naming the option, as a mistake, instead of acting as if it were left out", async () => {
		const ws = await fixtureWorkspace(["many-qa-72"]);
		const where = ["--workspace", ws.workspace, "--sessions", ws.sessions, "--agent-dir", ws.agentDir];
		for (const [args, flag] of [
			[["search", "topic", ...where, "--limit", ""], "--limit"],
			[["search", "topic", ...where, "--offset", " "], "--offset"],
			[["sessions", ...where, "--from", ""], "--from"],
			[["search", "topic", ...where, "--session", ""], "--session"],
			[["sessions", "--sessions", ws.sessions, "--agent-dir", ws.agentDir, "-w", ""], "--workspace"],
			[["ingest", "--workspace", ws.workspace, "-s", ws.sessions, "-s", "", "--agent-dir", ws.agentDir], "--sessions"],
		] as const) {
			const run = await cli(args);
			expect(run.code, args.join(" ")).toBe(2);
			expect(run.stderr).toContain(`pbot-history: ${flag}: an empty value`);
		}
		// An empty query is not an option: it lists the sessions, as documented.
		expect((await cli(["search", "", ...where])).code).toBe(0);
	});

	it("an option left without its value, which took the next option as one: said, beside commander's 'too many arguments'", async () => {
		const ws = await fixtureWorkspace(["many-qa-72"]);
		const run = await cli(["sessions", "--limit", "--sessions", ws.sessions, "--workspace", ws.workspace, "--agent-dir", ws.agentDir]);
		expect(run.code).toBe(2);
		expect(run.stderr).toContain('pbot-history: --limit took "--sessions" as its value: give --limit a value of its own');
		// A value that only looks like an option is not blamed when the command is otherwise right.
		const fine = await cli(["search", "topic", "--workspace", ws.workspace, "--sessions", ws.sessions, "--agent-dir", ws.agentDir, "--limit", "1", "extra"]);
		expect(fine.code).toBe(2);
		expect(fine.stderr).not.toContain("as its value");
	});
});

describe("CLI --sessions", () => {
	it("takes one folder per flag, repeated for more: the words after it stay the command's", async () => {
		const one = await fixtureWorkspace(["many-qa-72"]);
		const two = await fixtureWorkspace(["unicode-image"]);
		const agent = ["--agent-dir", one.agentDir];
		// The query after the folder: a variadic flag took it as a second folder.
		const after = await cli(["search", "--workspace", one.workspace, "--sessions", one.sessions, "topic-01", "--json", ...agent]);
		expect(after.code, after.stderr).toBe(0);
		expect((JSON.parse(after.stdout) as SearchResult).query).toBe("topic-01");
		// Two folders, one flag each: the sessions of both.
		const both = await cli(["sessions", "--workspace", one.workspace, "-s", one.sessions, "-s", two.sessions, "--json", ...agent]);
		expect(both.code, both.stderr).toBe(0);
		expect((JSON.parse(both.stdout) as SessionListResult).total).toBe(2);
	});

	it("exits 2 with a clear message when it names a missing path or a file, instead of answering 0 sessions", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-bad-sessions-"));
		await mkdir(join(root, "ws"));
		const file = join(root, "a-file.jsonl");
		await writeFile(file, "");
		for (const [dir, why] of [
			[join(root, "missing"), "does not exist"],
			// A session file named where its folder is wanted: the message names the folder.
			[file, `is not a folder (name the folder that holds it: ${root})`],
		] as const) {
			for (const command of [["sessions"], ["search", "x"], ["ingest"]]) {
				const run = await cli([...command, "--workspace", join(root, "ws"), "--sessions", dir, "--agent-dir", join(root, "agent")]);
				expect(run.code, `${command[0]} ${dir}`).toBe(2);
				expect(run.stderr).toContain(`--sessions: ${dir} ${why}`);
			}
		}
		await rm(root, { recursive: true, force: true });
	});
});

describe("CLI --workspace", () => {
	it("names the file in the way when the workspace's .pi is a file, and a --keep that is not a folder", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-pi-file-"));
		await writeFile(join(root, ".pi"), "");
		for (const command of [["sessions"], ["search", "x"], ["ingest"]]) {
			const run = await cli([...command, "--workspace", root, "--agent-dir", join(root, "agent")]);
			expect(run.code, command[0]).toBe(1);
			expect(run.stderr).toBe(
				`pbot-history: ${join(root, ".pi")} is not a folder: pbot keeps its files in ${join(root, ".pi", "pbot")} (move or rename that file)\n`,
			);
		}
		const keep = await cli(["demo", "--keep", join(root, ".pi")]);
		expect(keep.code).toBe(2);
		expect(keep.stderr).toContain(`--keep: ${join(root, ".pi")} is not a folder`);
		await rm(root, { recursive: true, force: true });
	});

	it("exits 2 with a clear message when it names a missing path or a file, and makes nothing there", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-bad-workspace-"));
		const sessions = join(root, "sessions");
		await mkdir(sessions);
		const file = join(root, "a-file");
		await writeFile(file, "");
		for (const [dir, why] of [
			[join(root, "typo", "project"), "does not exist"],
			[file, "is not a folder"],
		] as const) {
			for (const command of [["sessions"], ["search", "x"], ["read", "qa_x"], ["ingest"], ["rebuild"]]) {
				const run = await cli([...command, "--workspace", dir, "--sessions", sessions, "--agent-dir", join(root, "agent")]);
				expect(run.code, `${command[0]} ${dir}`).toBe(2);
				expect(run.stderr).toContain(`--workspace: ${dir} ${why}`);
			}
		}
		expect((await readdir(root)).sort()).toEqual(["a-file", "sessions"]);
		await rm(root, { recursive: true, force: true });
	});
});

describe("CLI output of archived text", () => {
	it("shows escape sequences, bells, carriage returns and bidi overrides as visible marks, and keeps them as they were in --json", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-escapes-"));
		const sessions = join(root, "sessions");
		await mkdir(sessions, { recursive: true });
		await mkdir(join(root, "ws"));
		const id = "0190aaaa-0000-7000-8000-0000000000e5";
		const hostile = "Rename \u001b]0;pwned\u0007 the \u001b[2J file\r\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\ to \u202egnp.exe please";
		await writeFile(
			join(sessions, `2026-01-01T00-00-00-000Z_${id}.jsonl`),
			jsonl([header(id), user("u1", null, hostile), reply("a1", "u1", `Done: ${hostile}`)]),
		);
		const where = ["--workspace", join(root, "ws"), "--sessions", sessions, "--agent-dir", join(root, "agent")];
		const runs = [await cli(["sessions", ...where]), await cli(["search", "rename", ...where])];
		const qaId = (JSON.parse((await cli(["search", "rename", ...where, "--json"])).stdout) as SearchResult).groups[0]?.hits[0]?.id as string;
		runs.push(await cli(["read", qaId, ...where]), await cli(["read", id, ...where]));
		for (const run of runs) {
			expect(run.code).toBe(0);
			expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
		}
		expect(runs[2]?.stdout).toContain("Rename ␛]0;pwned␇ the ␛[2J file␍␛]8;;https://evil.example␛\\link␛]8;;␛\\ to <U+202E>gnp.exe please");
		const json = JSON.parse((await cli(["read", qaId, ...where, "--json"])).stdout) as ReadResult;
		expect(json.body).toContain(hostile);
		await rm(root, { recursive: true, force: true });
	});
});
