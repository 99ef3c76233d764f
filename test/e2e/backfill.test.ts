import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { SETTINGS_FILE } from "../../src/storage/history-files/settingsFile.ts";
import { waitFor } from "../helpers/waitFor.ts";
import { hasTmux, piInTmux } from "./piInTmux.ts";

/**
 * The backfill question in the real Pi TUI: a workspace whose past sessions have more summaries due
 * than its threshold. After the first turn the question appears before any summary call (the fake
 * model logs every call to a file); declining makes none and is stored in the workspace.
 */
const { screen, see, type, press, start, stop } = piInTmux("pbot-e2e-backfill");

describe.skipIf(!hasTmux)("summary backfill asks first in the real Pi TUI (tmux)", () => {
	let root: string;
	let workspace: string;
	let log: string;
	const calls = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
	beforeAll(async () => {
		root = await mkdtemp(join(tmpdir(), "pbot-tui-backfill-"));
		workspace = join(root, "workspace");
		const agentDir = join(root, "agent");
		log = join(root, "summary-calls.log");
		await mkdir(join(workspace, ".pi", "pbot"), { recursive: true });
		// Three past sessions of eight Q&A: six summaries due, above a threshold of four.
		for (let s = 1; s <= 3; s++) {
			const sm = SessionManager.create(workspace, nativeSessionDir(workspace, agentDir));
			for (let q = 1; q <= 8; q++) {
				sm.appendMessage({ role: "user", content: [{ type: "text", text: `past ${s} question ${q}` }], timestamp: Date.now() });
				sm.appendMessage(fauxAssistantMessage(`past answer ${s}.${q}`));
			}
		}
		await writeFile(join(workspace, SETTINGS_FILE), JSON.stringify({ format: "pbot-settings", version: 1, summaries: { threshold: 4 } }));
		await start(workspace, agentDir, 140, 40, { PBOT_FAKE_SUMMARY_LOG: log });
	});
	afterAll(async () => {
		stop();
		if (root) await rm(root, { recursive: true, force: true });
	});

	it("asks before any summary call; declining makes none and is remembered", async () => {
		type("hello there");
		press("Enter");
		await see("ANSWER: hello there");
		await see("summarize earlier work?", "the backfill question");
		expect(screen()).toMatch(/6 summaries in 3 sessions \(about [\d,.]+k? input tokens\)/);
		expect(calls()).toEqual([]);
		// The first row is "Not now"; the third is "No".
		press("Down");
		press("Down");
		await see(/→ No: never/, "the No row selected");
		press("Enter");
		await waitFor(() => readFileSync(join(workspace, SETTINGS_FILE), "utf8").includes('"off"'), "the answer stored", 10_000, 100);
		// Another turn ends: not asked again, and still no summary call (this session has none due).
		type("and again");
		press("Enter");
		await see("ANSWER: and again");
		await new Promise((r) => setTimeout(r, 1500));
		expect(screen()).not.toContain("summarize earlier work?");
		expect(calls()).toEqual([]);
	});
});
