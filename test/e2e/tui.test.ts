import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/waitFor.ts";
import { hasTmux, piInTmux } from "./piInTmux.ts";

/** End to end in the real Pi TUI (tmux, see `piInTmux`): browse, search, and the model's tool call. */
const { screen, see, type, press, start, stop } = piInTmux("pbot-e2e");
/** Types a command and submits it: Escape first closes the autocomplete popup that would take the Enter. */
const submit = (text: string) => {
	type(text);
	press("Escape");
	press("Enter");
};

describe.skipIf(!hasTmux)("the real Pi TUI with pbot (tmux)", () => {
	let root: string;
	beforeAll(async () => {
		root = await mkdtemp(join(tmpdir(), "pbot-tui-"));
		const ws = join(root, "workspace");
		await mkdir(ws, { recursive: true });
		// Summary calls answer after 4 s: long enough to see the footer while the first one runs.
		await start(ws, join(root, "agent"), 140, 45, { PBOT_FAKE_SUMMARY_DELAY_MS: "4000" });
	});
	afterAll(async () => {
		stop();
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
		await see(/^ *Answer \(/m, "the Answer heading, rendered");
		press("BSpace");
		await see("Children 2");
		// Backspace on the first node: back to the picker it was opened from, its row selected; Enter opens it again.
		await see("Backspace back to list");
		press("BSpace");
		await see("newest first", "the picker again");
		expect(screen()).not.toContain("Backspace back");
		expect(screen()).toMatch(/→ +1\. remember the walrus-protocol decision/);
		press("Enter");
		await see("Children 2");
		press("q");
		await waitFor(() => !screen().includes("Backspace back"), "the viewer to close", 10_000, 100);
		expect(screen()).not.toContain("newest first");

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

	it("leaves the question being answered out of the model's search: the one hit is the earlier Q&A", async () => {
		type("we dropped the zebrafish cache");
		press("Enter");
		await see("ANSWER: we dropped the zebrafish cache");
		// This question names "zebrafish" too; the tool's search runs while it is being answered.
		type("when? please use pbot_history to find zebrafish");
		press("Enter");
		await see(/hit\(s\) for "zebrafish"/, "the tool's one-line result");
		expect(screen()).toMatch(/1 hit\(s\) for "zebrafish"/);
		await see("Found it in the history.", "the answer after the tool");
	});

	it("renders a failed tool call as its error, and shows the summary pass's 0/N in the footer while the first call runs", async () => {
		// The fourth Q&A of the session: when it ends, one summary is due (the fake model takes 4 s per summary).
		type("please use pbot_history to read nosuchnode");
		press("Enter");
		await see("unknown node", "the error of the failed call");
		const shown = screen();
		expect(shown).toContain("pbot_history read nosuchnode");
		expect(shown).not.toContain("undefined");
		await see("Found it in the history.", "the answer after the failed tool call");
		await see("pbot: summaries 0/1", "the footer before the first summary call ends");
		// Once the call has answered, the pass is over and the footer clears.
		await waitFor(() => !screen().includes("pbot: summaries"), "the footer to clear after the summary", 20_000, 100);
	});
});
