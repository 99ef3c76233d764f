import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { hasTmux, piInTmux } from "./piInTmux.ts";

/**
 * The picker in the real Pi TUI on a small terminal (80×24) with 60 sessions, written by Pi's own
 * `SessionManager`: the title and the selected row stay on screen as the selection moves, and Enter
 * opens the row shown as selected.
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
		// The picker lists the newest 50 of the 60.
		await see("1 of 50");
		expect(screen()).toContain(`${COUNT} session(s), newest first`);
		expect(screen()).toMatch(/→ +1\. Heron question number \d+/);
		for (let i = 0; i < 30; i++) press("Down");
		await see("31 of 50");
		const shown = screen();
		expect(shown).toContain("newest first");
		// The selected row is on screen; Enter opens that session.
		const selected = /→ +31\. Heron question number (\d+)/.exec(shown)?.[1];
		expect(selected).toBeDefined();
		press("Enter");
		await see(new RegExp(`Session .*Heron question number ${selected}\\b`), `the viewer on session ${selected}`);
	});
});
