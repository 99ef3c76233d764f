import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/waitFor.ts";

/**
 * End to end in the real Pi TUI: tmux runs `pi` with a fake model and pbot loaded from this
 * package (its `pi.extensions` manifest). Keys are typed with send-keys; the screen is polled with
 * capture-pane for the expected text, never read after a fixed sleep.
 */
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const REPO = resolve(import.meta.dirname, "../..");
const PI = join(REPO, "node_modules", ".bin", "pi");
const SESSION = `pbot-e2e-${process.pid}`;

function tmux(...args: string[]): string {
	return execFileSync("tmux", args, { encoding: "utf8" });
}
const screen = () => tmux("capture-pane", "-p", "-t", SESSION);
const type = (text: string) => tmux("send-keys", "-t", SESSION, "-l", text);
const press = (...keys: string[]) => tmux("send-keys", "-t", SESSION, ...keys);
/** Types a command and submits it: Escape first closes the autocomplete popup that would take the Enter. */
const submit = (text: string) => {
	type(text);
	press("Escape");
	press("Enter");
};
const see = (text: string | RegExp, what = String(text)) =>
	waitFor(() => (typeof text === "string" ? screen().includes(text) : text.test(screen())), `"${what}" on screen:\n${screen()}`, 20_000, 100);

describe.skipIf(!hasTmux)("the real Pi TUI with pbot (tmux)", () => {
	let root: string;
	beforeAll(async () => {
		root = await mkdtemp(join(tmpdir(), "pbot-tui-"));
		const ws = join(root, "workspace");
		await mkdir(ws, { recursive: true });
		const env = `env PI_CODING_AGENT_DIR=${join(root, "agent")} PI_OFFLINE=1 PI_TELEMETRY=0`;
		const command = `${env} ${PI} -ne -ns -np -nc --provider pbot-fake --model fake-1 -e ${join(REPO, "test/e2e/fake-provider.ts")} -e ${REPO}`;
		tmux("new-session", "-d", "-s", SESSION, "-x", "140", "-y", "45", "-c", ws, command);
		await see("fake-1", "the footer with the model");
	});
	afterAll(async () => {
		spawnSync("tmux", ["kill-session", "-t", SESSION]);
		if (root) await rm(root, { recursive: true, force: true });
	});

	it("browses sessions, opens a child and goes back, searches, and shows the tool's result", async () => {
		type("remember the walrus-protocol decision");
		press("Enter");
		await see("ANSWER: remember the walrus-protocol decision");
		type("and the fern watering schedule");
		press("Enter");
		await see("ANSWER: and the fern watering schedule");

		// Picker of sessions (one Enter runs the command: no completion popup takes it), then the viewer on the session.
		type("/pbot history");
		press("Enter");
		await see("newest first");
		press("Enter");
		await see(/Session .*·/, "the viewer on the session");
		await see("Children 2");
		// Open the first child (a Q&A), see its body, go back, close.
		press("Enter");
		await see(/Q&A .*·/, "the viewer on a Q&A");
		await see("## Answer");
		press("BSpace");
		await see("Children 2");
		press("q");
		await waitFor(() => !screen().includes("Backspace back"), "the viewer to close", 10_000, 100);

		// Search, open the hit.
		submit("/pbot history WALRUS");
		await see('hit(s) for "WALRUS"');
		press("Enter");
		await see(/Q&A .*·/, "the viewer on the hit");
		await see("walrus-protocol");
		press("q");
		await waitFor(() => !screen().includes("Backspace back"), "the viewer to close", 10_000, 100);

		// The model calls the tool; its rendered result shows.
		type("please use pbot_history to find fern");
		press("Enter");
		await see("pbot_history");
		await see(/hit\(s\) for "fern"/, "the tool's one-line result");
		await see("Found it in the history.");
		expect(screen()).toContain("pbot_history");
	});
});
