import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HistoryPicker } from "../../src/integrations/pi/history/picker.ts";
import type { HistoryViewer } from "../../src/integrations/pi/history/viewer.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { recordingUi, startPi, type PiHarness } from "../helpers/pi.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { fixtureArchive } from "../helpers/fixtures.ts";

const harnesses: PiHarness[] = [];
afterEach(async () => {
	for (const h of harnesses.splice(0).reverse()) await h.dispose();
});

async function pi(options: Parameters<typeof startPi>[0] = {}) {
	const h = await startPi(options);
	harnesses.push(h);
	return h;
}

async function archiveText(workspace: string): Promise<string> {
	const dir = historyDir(workspace);
	const names = await readdir(dir).catch(() => [] as string[]);
	const texts = await Promise.all(names.filter((n) => n.endsWith(".json")).map((n) => readFile(join(dir, n), "utf8")));
	return texts.join("\n");
}

describe("pbot inside Pi (headless SDK, faux model)", () => {
	it("ingests the workspace's existing sessions when a session starts", async () => {
		const first = await pi();
		first.faux.setResponses([fauxAssistantMessage("The capital is Ulaanbaatar.")]);
		await first.session.prompt("What is the capital of Mongolia?");
		await first.runtime.settled();
		const root = first.root;
		await first.session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });

		const second = await pi({ root });
		await second.runtime.settled();
		expect(await archiveText(second.workspace)).toContain("Ulaanbaatar");
	});

	it("archives a finished interaction at agent_end", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("We picked PostgreSQL for the ledger.")]);
		await h.session.prompt("Which database did we pick?");
		await h.runtime.settled();
		expect(await archiveText(h.workspace)).toContain("We picked PostgreSQL for the ledger.");
	});

	it("makes a question searchable while its run is still going (live tail, before agent_end)", async () => {
		const h = await pi();
		let seenMidRun = false;
		h.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("bash", { command: "echo checking" }, { id: "c1" })], { stopReason: "toolUse" }),
			async () => {
				// The run has not ended: no agent_end yet. The archive must already hold the question.
				await waitFor(async () => (await archiveText(h.workspace)).includes("zebra-migration"), "the live question in the archive");
				seenMidRun = true;
				return fauxAssistantMessage("Done.");
			},
		]);
		await h.session.prompt("Plan the zebra-migration please");
		expect(seenMidRun).toBe(true);
	});

	it("answers the model's pbot_history call with hits and details", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("Use the blue-green deployment with a 5 minute bake.")]);
		await h.session.prompt("How do we deploy?");
		h.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("pbot_history", { action: "search", query: "BLUE-GREEN" }, { id: "t1" })], { stopReason: "toolUse" }),
			fauxAssistantMessage("Found it."),
		]);
		await h.session.prompt("When did we decide on blue-green?");
		const result = h.session.messages.find((m) => m.role === "toolResult" && m.toolName === "pbot_history");
		expect(result).toBeDefined();
		const details = (result as { details: { kind: string; total: number; groups: { hits: { snippet: string }[] }[] } }).details;
		expect(details.kind).toBe("hits");
		expect(details.total).toBeGreaterThanOrEqual(1);
		expect(details.groups[0]?.hits[0]?.snippet).toContain("blue-green");
		const text = (result as { content: { text: string }[] }).content[0]?.text ?? "";
		expect(text).toMatch(/id=qa_/);
	});

	it("tells the model and the person what went wrong on the way: a refused archive is in the tool's details and text", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("The pelican answer.")]);
		await h.session.prompt("Where is the pelican?");
		await waitFor(async () => (await archiveText(h.workspace)).includes("pelican answer"), "the archived answer");
		// A FIFO named like an archive (as a cloned repository could carry it).
		const { execFileSync } = await import("node:child_process");
		execFileSync("mkfifo", [join(historyDir(h.workspace), "0190ffff-0000-7000-8000-00000000fifo.json")]);
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		const result = await tool.execute("w", { action: "search", query: "pelican" }, undefined, undefined, h.session.extensionRunner.createContext());
		const details = result.details as { total: number; warnings?: string[] };
		expect(details.total).toBeGreaterThanOrEqual(1);
		expect(details.warnings?.join("\n")).toMatch(/0190ffff-0000-7000-8000-00000000fifo\.json is a FIFO/);
		const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
		expect(text).toMatch(/Warnings: .*is a FIFO/);
		// Said at every query while it is there (it is never followed, and never hidden).
		const again = await tool.execute("w2", { action: "search", query: "pelican" }, undefined, undefined, h.session.extensionRunner.createContext());
		expect((again.details as { warnings?: string[] }).warnings?.join("\n") ?? "").toMatch(/is a FIFO/);
	});

	it("renders a failed call as its error, collapsed and expanded, and an invalid action as such (no 'undefined')", async () => {
		const h = await pi();
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		const theme = { fg: (color: string, text: string) => `[${color}]${text}`, bold: (text: string) => text } as never;
		const failed = { content: [{ type: "text" as const, text: 'unknown node id "qa_nope"\nsearch first, then read an id it gives' }], details: {} };
		for (const expanded of [false, true]) {
			const shown = tool.renderResult!(failed as never, { expanded, isPartial: false }, theme, { isError: true } as never)
				.render(200)
				.join("\n");
			expect(shown).toContain('[error]unknown node id "qa_nope"');
			expect(shown).not.toMatch(/undefined|\[success\]/);
			expect(shown.includes("search first")).toBe(expanded);
		}
		// Pi's own validation failure names the tool on one line and the reason on the next: both show collapsed.
		const invalid = {
			content: [
				{
					type: "text" as const,
					text: 'Validation failed for tool "pbot_history":\n  - action: must be equal to one of the allowed values\n\nReceived arguments:\n{"action":"delete"}',
				},
			],
			details: {},
		};
		const collapsed = tool.renderResult!(invalid as never, { expanded: false, isPartial: false }, theme, { isError: true } as never)
			.render(200)
			.join("\n");
		expect(collapsed).toContain('Validation failed for tool "pbot_history": - action: must be equal to one of the allowed values');
		expect(collapsed).not.toContain("Received arguments");
		const call = tool.renderCall!({ action: "delete", query: "x" } as never, theme, {} as never)
			.render(200)
			.join("\n");
		expect(call).toContain("delete (not an action: search or read)");
		expect(call).not.toContain('search "x"');
	});

	it("leaves the question being answered out of the model's own search (and says so); the earlier Q&A is the hit", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("Keep the flamingo cache for a week.")]);
		await h.session.prompt("Should we keep the flamingo cache?");
		h.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("pbot_history", { action: "search", query: "flamingo" }, { id: "t-own" })], { stopReason: "toolUse" }),
			fauxAssistantMessage("We decided to keep it for a week."),
		]);
		await h.session.prompt("When did we talk about the flamingo cache?");
		const result = h.session.messages.find((m) => m.role === "toolResult" && m.toolName === "pbot_history") as unknown as {
			details: { total: number; leftOut?: number; groups: { hits: { snippet: string }[] }[] };
			content: { text: string }[];
		};
		expect(result.details.total).toBe(1);
		expect(result.details.groups[0]?.hits[0]?.snippet).toContain("Should we keep the flamingo cache?");
		expect(result.details.leftOut).toBe(1);
		expect(result.content[0]?.text).toMatch(/Left out: the question in progress/);
		// Once answered, a later search finds both.
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		const later = await tool.execute("later", { action: "search", query: "flamingo" }, undefined, undefined, h.session.extensionRunner.createContext());
		expect((later.details as { total: number }).total).toBe(2);
	});

	it("returns the service's clear error for bad tool parameters", async () => {
		const h = await pi();
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		const ctx = h.session.extensionRunner.createContext();
		await expect(tool.execute("x", { action: "search", query: "a", from: "yesterday" }, undefined, undefined, ctx)).rejects.toThrow(/from/);
		await expect(tool.execute("x", { action: "read" }, undefined, undefined, ctx)).rejects.toThrow(/id: required/);
		await expect(tool.execute("x", { action: "read", id: "qa_doesnotexist" }, undefined, undefined, ctx)).rejects.toThrow(/unknown/);
	});

	it("tells the model why a page is empty: a count (limit 0) or an offset past the end, and where the last page starts", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("The heron ledger is on shelf 2.")]);
		await h.session.prompt("Where is the heron ledger?");
		// The session is listed once its archive is written (searches see it before, from memory).
		await waitFor(async () => (await archiveText(h.workspace)).includes("heron ledger"), "the archive");
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		const ctx = h.session.extensionRunner.createContext();
		const text = async (params: Record<string, unknown>) =>
			((await tool.execute("p", params as never, undefined, undefined, ctx)) as { content: { text: string }[] }).content[0]?.text;
		expect(await text({ action: "search", query: "heron", limit: 0 })).toBe('1 hit(s) for "heron"; none listed (limit=0 counts only).');
		expect(await text({ action: "search", query: "heron", offset: 5 })).toBe('1 hit(s) for "heron"; none from offset=5: the last page starts at offset=0.');
		expect(await text({ action: "sessions", offset: 3 })).toMatch(/^\d+ session\(s\) match; none from offset=3: the last page starts at offset=0\.$/);
	});

	it("/pbot history lists sessions in a picker and opens the chosen one in the viewer", async () => {
		const recorder = recordingUi((_title, options) => options[0]);
		const h = await pi({ uiContext: recorder.ui });
		h.faux.setResponses([fauxAssistantMessage("Rotate the keys every 90 days.")]);
		await h.session.prompt("How often do we rotate keys?");
		const command = h.session.prompt("/pbot history");
		await waitFor(() => recorder.hasCustom(), "the picker to be shown");
		const picker = (await recorder.openCustom()) as HistoryPicker;
		const listed = picker.render(100).join("\n");
		expect(listed).toMatch(/session\(s\), newest first/);
		expect(listed).toContain("How often do we rotate keys?");
		picker.handleInput("\r");
		await waitFor(() => recorder.hasCustom(), "the viewer to be shown");
		const component = (await recorder.openCustom()) as HistoryViewer;
		expect(component.current.kind).toBe("session");
		component.handleInput("\r"); // open the first child (a Q&A)
		await waitFor(() => component.depth === 2, "the child to open");
		expect(component.render(100).join("\n")).toContain("Rotate the keys every 90 days.");
		component.handleInput("\x7f"); // Backspace
		expect(component.depth).toBe(1);
		component.handleInput("q");
		await command; // the command ends when the viewer closes
		expect(recorder.shown.some((s) => s.kind === "editor")).toBe(false);
	});

	it("shows escape sequences and bidi overrides in archived text as visible marks in the picker and the viewer, never sends them", async () => {
		const recorder = recordingUi((_title, options) => options[0]);
		const h = await pi({ uiContext: recorder.ui });
		const hostile = "Why \u001b]0;PWNED\u0007 and \u001b[2J and \u202egnp.exe in pelicans?";
		h.faux.setResponses([fauxAssistantMessage("Because \u001b[31mred\u001b[0m pelicans.")]);
		await h.session.prompt(hostile);
		const command = h.session.prompt("/pbot history pelicans");
		await waitFor(() => recorder.hasCustom(), "the picker to be shown");
		const picker = (await recorder.openCustom()) as HistoryPicker;
		const select = picker.render(200).join("\n");
		expect(select).toContain("pelicans");
		picker.handleInput("\r");
		await waitFor(() => recorder.hasCustom(), "the viewer to be shown");
		const component = (await recorder.openCustom()) as HistoryViewer;
		const screen = component.render(100).join("\n");
		for (const shown of [select, screen]) {
			expect(shown).not.toMatch(/[\u001b\u0007\u202e]/);
			expect(shown).toContain("␛]0;PWNED␇");
		}
		expect(screen).toContain("<U+202E>gnp.exe");
		expect(screen).toContain("␛[31mred␛[0m");
		component.handleInput("q");
		await command;
		// The archive keeps the text as it was.
		expect(await archiveText(h.workspace)).toContain(JSON.stringify(hostile).slice(1, -1));
	});

	it("falls back to dialogs where custom components are not available (RPC), discarding what is typed", async () => {
		let selects = 0;
		const recorder = recordingUi((_title, options) => (selects++ === 0 ? options[0] : selects === 2 ? options[0] : "close"), { rpc: true });
		const h = await pi({ uiContext: recorder.ui });
		h.faux.setResponses([fauxAssistantMessage("Ship on Thursdays.")]);
		await h.session.prompt("When do we ship?");
		await h.runtime.settled();
		const before = await archiveText(h.workspace);
		await h.session.prompt("/pbot history");
		const editors = recorder.shown.filter((s) => s.kind === "editor").map((s) => s.text);
		expect(editors).toHaveLength(2);
		expect(editors[0]).toContain("When do we ship?"); // the session's directory
		expect(editors[1]).toContain("Ship on Thursdays."); // its child, opened from the second select
		await h.runtime.settled();
		expect(await archiveText(h.workspace)).toBe(before);
		expect(before).toContain("Ship on Thursdays.");
		expect(before).not.toContain("TYPED BY THE PERSON");
	});

	it("prints results as text when there is no UI (print mode)", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("The release branch is cut on Mondays.")]);
		await h.session.prompt("When is the release branch cut?");
		const printed: string[] = [];
		const redirected: string[] = [];
		// On stdout itself: print mode's output can be redirected to a file. As Pi's print mode does,
		// `process.stdout.write` is replaced by a redirect to stderr; the stream's own write is stdout.
		const raw = vi.spyOn(Object.getPrototypeOf(process.stdout) as { write: (chunk: unknown) => boolean }, "write").mockImplementation((chunk: unknown) => {
			printed.push(String(chunk).replace(/\n$/, ""));
			return true;
		});
		const takeover = vi.spyOn(process.stdout, "write").mockImplementation((chunk: unknown) => {
			redirected.push(String(chunk));
			return true;
		});
		try {
			await h.session.prompt("/pbot history");
			await h.session.prompt("/pbot history MONDAYS");
			await h.session.prompt("/pbot nonsense");
		} finally {
			takeover.mockRestore();
			raw.mockRestore();
		}
		expect(redirected.join("")).not.toContain("MONDAYS");
		expect(printed[0]).toMatch(/Sessions 1–1 of 1/);
		expect(printed[1]).toMatch(/1 hit\(s\) for "MONDAYS"/);
		expect(printed[2]).toBe("Usage: /pbot history [keyword]  ·  /pbot summaries [on|off|threshold <calls>]");
	});

	it("/pbot history <keyword> shows hits grouped by level", async () => {
		const recorder = recordingUi(() => undefined);
		const h = await pi({ uiContext: recorder.ui });
		h.faux.setResponses([fauxAssistantMessage("The flaky test was the timezone one.")]);
		await h.session.prompt("Which test was flaky?");
		const command = h.session.prompt("/pbot history TIMEZONE");
		await waitFor(() => recorder.hasCustom(), "the picker to be shown");
		const picker = (await recorder.openCustom()) as HistoryPicker;
		const select = picker.render(120).join("\n");
		expect(select).toMatch(/1 hit\(s\) for "TIMEZONE"/);
		expect(select).toContain("[Q&A]");
		expect(select).toContain("timezone");
		picker.handleInput("\x1b"); // Escape closes it
		await command;
	});

	it("hit rows lead with each node's own words, the selected hit's match is highlighted, and the viewer renders Markdown with the matches marked", async () => {
		const recorder = recordingUi();
		const h = await pi({ uiContext: recorder.ui });
		h.faux.setResponses([
			fauxAssistantMessage("## Plan\n\n- feed the **Otter** at noon\n- clean the pool"),
			fauxAssistantMessage("They sleep in holts."),
			fauxAssistantMessage("About a metre."),
		]);
		await h.session.prompt("What is the otter feeding plan?");
		await h.session.prompt("Where do otters sleep?");
		await h.session.prompt("How big is an OTTER?");
		const command = h.session.prompt("/pbot history otter");
		await waitFor(() => recorder.hasCustom(), "the picker to be shown");
		const picker = (await recorder.openCustom(40)) as HistoryPicker;
		const rows = picker
			.render(160)
			.filter((line) => /\[Q&A\]/.test(line))
			.map((line) => line.replace(/^\W*\d+\. \[Q&A\] /, ""));
		// Each row starts with its own question (these three ended within a millisecond or so: their order is not asserted), the session after it.
		const leads = rows.map((r) => r.split("  ·  ")[0] as string);
		expect([...leads].sort()).toEqual(["How big is an OTTER?", "What is the otter feeding plan?", "Where do otters sleep?"]);
		// Then the session's title (its first question; which one, among three asked in the same millisecond, is not asserted).
		const titles = new Set(rows.map((r) => r.split("  ·  ")[1]));
		expect(titles.size).toBe(1);
		expect(leads).toContain([...titles][0]);
		const first = leads[0] as string;
		expect(picker.render(160).join("\n")).toContain(`match: ${first.replace(/otter/i, (m) => `>${m}<`)}`);
		for (let i = 0; i < leads.indexOf("What is the otter feeding plan?"); i++) picker.handleInput("\x1b[B");
		expect(picker.render(160).join("\n")).toContain("match: What is the >otter< feeding plan?");
		picker.handleInput("\r");
		await waitFor(() => recorder.hasCustom(), "the viewer to be shown");
		const viewer = (await recorder.openCustom(40)) as HistoryViewer;
		const screen = viewer.render(100).join("\n");
		expect(screen).toContain("What is the >otter< feeding plan?");
		expect(screen).toContain("feed the >Otter< at noon");
		// Markdown, not its source: the heading without its hashes, the bold without its stars.
		expect(screen).toMatch(/^Plan *$/m);
		expect(screen).not.toContain("## Plan");
		expect(screen).not.toContain("**");
		viewer.handleInput("q");
		await command;
	});

	it("offers 'history' and 'summaries' as the argument completions", async () => {
		const h = await pi();
		const command = h.session.extensionRunner.getCommand("pbot")!;
		expect(await command.getArgumentCompletions!("hi")).toEqual([expect.objectContaining({ value: "history " })]);
		expect(await command.getArgumentCompletions!("su")).toEqual([expect.objectContaining({ value: "summaries " })]);
		expect((await command.getArgumentCompletions!(""))?.map((c) => c.value)).toEqual(["history ", "summaries "]);
		expect(await command.getArgumentCompletions!("x")).toBeNull();
		// Typed whole: no popup to take the Enter that runs it.
		expect(await command.getArgumentCompletions!("history")).toBeNull();
		expect(await command.getArgumentCompletions!("summaries")).toBeNull();
	});

	it("stops following the session file on shutdown: no watcher is left", async () => {
		const h = await pi();
		h.faux.setResponses([fauxAssistantMessage("ok")]);
		await h.session.prompt("hello");
		expect(h.runtime.following).toBe(h.session.sessionFile);
		await h.session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
		expect(h.runtime.following).toBeUndefined();
	});
});

describe("pbot inside Pi: the old location", () => {
	it("copies this workspace's records from <agentDir>/pbot/history on start, without their paths", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-pi-old-"));
		const workspace = join(root, "workspace");
		const old = join(root, "agent", "pbot", "history");
		await mkdir(old, { recursive: true });
		const archive = await fixtureArchive("steer-followup-abort");
		const id = archive.session.sessionId;
		await writeFile(join(old, `${id}.json`), JSON.stringify({ ...archive, file: join(workspace, "sessions", "x.jsonl"), cwd: workspace }));
		const h = await startPi({ root });
		harnesses.push(h);
		await h.runtime.settled();
		const copied = await readFile(join(historyDir(workspace), `${id}.json`), "utf8");
		expect(JSON.parse(copied).nodes).toEqual(archive.nodes);
		expect(copied).not.toContain(workspace);
		expect(await readFile(join(old, `${id}.json`), "utf8")).toContain('"file"');
		const tool = h.session.extensionRunner.getToolDefinition("pbot_history")!;
		const result = await tool.execute("t", { action: "search", query: "build the project" }, undefined, undefined, h.session.extensionRunner.createContext());
		expect((result.details as { total: number }).total).toBeGreaterThan(0);
		await h.dispose();
		harnesses.pop();
		await rm(root, { recursive: true, force: true });
	});
});
