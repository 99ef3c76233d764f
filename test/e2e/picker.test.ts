import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { hasTmux, piInTmux } from "./piInTmux.ts";

/**
 * The picker in the real Pi TUI on a small terminal (80×24) with 60 sessions, written by Pi's own
 * `SessionManager`: the title and the selected row stay on screen as the selection moves, Enter
 * opens the row shown as selected, and the rows past the first page (50) are loaded as the selection
 * reaches them.
 */
const COUNT = 60;
const { screen, see, type, press, start, stop } = piInTmux("pbot-e2e-picker");

describe.skipIf(!hasTmux)("the picker in the real Pi TUI at 80×24 with 60 sessions (tmux)", () => {
	let root: string;
	beforeAll(async () => {
		root = await mkdtemp(join(tmpdir(), "pbot-tui-picker-"));
		const ws = join(root, "workspace");
		const agentDir = join(root, "agent");
		await mkdir(ws, { recursive: true });
		// Sixty sessions of this workspace, one Q&A each, in Pi's native folder for it.
		for (let i = 1; i <= COUNT; i++) {
			const sm = SessionManager.create(ws, nativeSessionDir(ws, agentDir));
			sm.appendMessage({ role: "user", content: [{ type: "text", text: `Heron question number ${i}` }], timestamp: Date.now() });
			sm.appendMessage(fauxAssistantMessage(`Heron answer ${i}`));
		}
		await start(ws, agentDir, 80, 24);
	});
	afterAll(async () => {
		stop();
		if (root) await rm(root, { recursive: true, force: true });
	});

	it("keeps the title and the selected row on screen and opens the row shown as selected", async () => {
		type("/pbot history");
		await see("/pbot history", "the command typed");
		press("Enter");
		// The picker counts all 60 and has the newest 50 of them so far.
		await see("1 of 60 · 50 loaded");
		expect(screen()).toContain(`${COUNT} session(s), newest first`);
		expect(screen()).toMatch(/→ +1\. Heron question number \d+/);
		for (let i = 0; i < 30; i++) press("Down");
		await see("31 of 60 · 50 loaded");
		const shown = screen();
		expect(shown).toContain("newest first");
		// The selected row is on screen; Enter opens that session.
		const selected = /→ +31\. Heron question number (\d+)/.exec(shown)?.[1];
		expect(selected).toBeDefined();
		press("Enter");
		await see(new RegExp(`Session .*Heron question number ${selected}\\b`), `the viewer on session ${selected}`);
	});

	it("reaches the rows past the first page with End and Down, and wraps only once all are here", async () => {
		press("q"); // close the viewer the test above opened
		await waitFor(() => !/Parents \d+ · Children/.test(screen()), "the viewer to close");
		type("/pbot history");
		await see("/pbot history", "the command typed");
		press("Enter");
		await see("1 of 60 · 50 loaded");
		press("End"); // the last loaded row: the rest comes
		await see(/50 of 60\s*$/m, "row 50 with every row loaded");
		press("Down");
		await see(/51 of 60\s*$/m);
		press("End");
		await see(/60 of 60\s*$/m);
		const selected = /→ +60\. Heron question number (\d+)/.exec(screen())?.[1];
		expect(selected).toBeDefined();
		press("Down");
		await see(/\b1 of 60\s*$/m, "Down at the last row wraps to the first");
		press("Up");
		await see(/60 of 60\s*$/m);
		press("PageUp");
		await see(/\b(4\d|5\d) of 60\s*$/m, "a window's rows up");
		press("Home");
		await see(/\b1 of 60\s*$/m);
		press("End");
		await see(/60 of 60\s*$/m);
		press("Enter");
		await see(new RegExp(`Session .*Heron question number ${selected}\\b`), `the viewer on session ${selected}`);
	});

	it("pages a search's hits the same way, each with its match", async () => {
		press("q");
		await waitFor(() => !/Parents \d+ · Children/.test(screen()), "the viewer to close");
		type("/pbot history heron question");
		await see("/pbot history heron question", "the command typed");
		press("Enter");
		await see(`${COUNT} hit(s) for "heron question"`);
		await see("1 of 60 · 50 loaded");
		press("End");
		await see(/50 of 60\s*$/m, "row 50 with every hit loaded");
		press("End");
		await see(/60 of 60\s*$/m);
		expect(screen()).toMatch(/→ +60\. \[Q&A\] Heron question number \d+/);
		expect(screen()).toMatch(/match: .*Heron question/);
		press("Escape");
	});
});
