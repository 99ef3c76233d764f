/**
 * The current session file is followed by the live tail; a query reads what was appended to it
 * through the tail and does not read the whole file again (in a 30 MB session every search after
 * an exchange took 250–430 ms for that, against 75). A file the tail has not read up to its end is
 * still read by the refresh, as before.
 */
import { existsSync, readFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { sessionFactsOf } from "../../src/integrations/pi/history/piSession.ts";
import { openWorkspaceHistory } from "../../src/integrations/pi/history/workspaceHistory.ts";
import { type PiHarness, startPi } from "../helpers/pi.ts";

let h: PiHarness | undefined;
afterEach(async () => {
	await h?.dispose();
	h = undefined;
});

describe("a query in Pi", () => {
	it("gets the current session's new exchanges from the tail, without reading its file again", async () => {
		h = await startPi();
		h.faux.setResponses(Array.from({ length: 2 }, (_, i) => () => fauxAssistantMessage(`answer number ${i + 1}`)));
		await h.session.prompt("Which gateway did we pick for the pelican service?");
		await h.session.prompt("And the queue for the heron jobs?");
		await h.runtime.settled();
		const facts = sessionFactsOf(h.session.extensionRunner.createContext());
		const current = facts.sessionId;

		// An exchange written as Pi writes it mid-turn (no \`agent_end\` yet, so no background refresh).
		const manager = h.session.sessionManager;
		manager.appendMessage({ role: "user", content: [{ type: "text", text: "What did we decide about the flamingo cache?" }], timestamp: Date.now() });
		manager.appendMessage(fauxAssistantMessage("We keep it in memory, bounded."));
		const service = await h.runtime.forQuery(facts);
		const report = await service.refresh();
		// The tail had it: the refresh left the file alone …
		expect(report.sessions.map((s) => s.sessionId)).not.toContain(current);
		// … and the new exchange is found all the same.
		const found = await service.search({ query: "flamingo cache" });
		expect(found).toMatchObject({ total: 1, groups: [{ hits: [{ sessionId: current }] }] });

		// Bytes the tail has not been asked to read: the refresh reads the file, as it always did.
		await appendFile(h.session.sessionFile as string, "\n");
		const again = await service.refresh();
		expect(again.sessions.map((s) => s.sessionId)).toContain(current);
		expect((await service.search({ query: "flamingo cache" })).total).toBe(1);
	});
});

describe("another process while Pi works in the workspace", () => {
	it("skips Pi's current session file once Pi archived it up to its end, and reads it again when Pi wrote more", async () => {
		h = await startPi();
		h.faux.setResponses(Array.from({ length: 3 }, (_, i) => () => fauxAssistantMessage(`answer number ${i + 1}`)));
		await h.session.prompt("Which gateway did we pick for the pelican service?");
		await h.session.prompt("And the queue for the heron jobs?");
		await h.runtime.settled();
		const facts = sessionFactsOf(h.session.extensionRunner.createContext());
		// Another process (\`pbot-history search\` in a terminal): a service of its own, checkpoints from disk.
		const other = () => openWorkspaceHistory({ workspace: h?.workspace as string, agentDir: facts.agentDir, migrate: false });
		const first = await other().refresh();
		expect(first.sessions.map((s) => s.sessionId)).not.toContain(facts.sessionId);
		expect(first.unchangedFiles).toBeGreaterThan(0);
		// Pi writes an exchange, and archives it as its run ends: the next process skips the file again.
		await h.session.prompt("What did we decide about the flamingo cache?");
		await h.runtime.settled();
		const next = other();
		expect((await next.refresh()).sessions.map((s) => s.sessionId)).not.toContain(facts.sessionId);
		expect((await next.search({ query: "flamingo cache" })).total).toBe(1);
		// Bytes Pi has not read yet: the other process reads the file itself, as before.
		h.session.sessionManager.appendMessage({ role: "user", content: [{ type: "text", text: "And the ibis logs?" }], timestamp: Date.now() });
		const third = other();
		expect((await third.refresh()).sessions.map((s) => s.sessionId)).toContain(facts.sessionId);
		expect((await third.search({ query: "ibis logs" })).total).toBe(1);
	});
});

describe("an agent run in Pi", () => {
	it("leaves its messages to be read when it ends or a query asks, not one by one", async () => {
		h = await startPi();
		const harness = h;
		h.faux.setResponses([() => fauxAssistantMessage("The pelican service goes through the blue gateway.")]);
		await h.session.prompt("Which gateway did we pick for the pelican service?");
		await h.runtime.settled();
		const facts = sessionFactsOf(h.session.extensionRunner.createContext());
		const archive = join(h.workspace, ".pi", "pbot", "history", `${facts.sessionId}.json`);
		const archived = () => (existsSync(archive) ? readFileSync(archive, "utf8") : "");
		expect(archived()).toContain("blue gateway");
		// The watcher's last reports of that run have come and gone (chokidar's throttle, the tail's settle).
		await new Promise((r) => setTimeout(r, 300));

		// While the run is on: Pi has written the question, and the watcher has had time to report it.
		let during: { archived: string; found: number; pelican: number } | undefined;
		h.faux.setResponses([
			async () => {
				await new Promise((r) => setTimeout(r, 600));
				const service = await harness.runtime.forQuery(facts);
				// The archive is still as the last run left it; a query reads the run's messages first.
				during = {
					archived: archived(),
					found: (await service.search({ query: "heron jobs" })).total,
					pelican: (await service.search({ query: "pelican service" })).total,
				};
				return fauxAssistantMessage("The heron jobs go to the slate queue.");
			},
		]);
		await h.session.prompt("And the queue for the heron jobs?");
		expect(during).toBeDefined();
		expect(during?.archived).not.toContain("heron jobs");
		expect(during?.pelican).toBe(1);
		expect(during?.found).toBe(1); // the query read the run's messages: the question asked in it is found

		// The run ended: its exchange is read once, archived and found.
		await h.runtime.settled();
		expect(archived()).toContain("slate queue");
		const service = await h.runtime.forQuery(facts);
		expect((await service.search({ query: "slate queue" })).total).toBe(1);
	});
});
