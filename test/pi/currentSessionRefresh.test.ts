/**
 * The current session file is followed by the live tail; a query reads what was appended to it
 * through the tail and does not read the whole file again (in a 30 MB session every search after
 * an exchange took 250–430 ms for that, against 75). A file the tail has not read up to its end is
 * still read by the refresh, as before.
 */
import { appendFile } from "node:fs/promises";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { sessionFactsOf } from "../../src/integrations/pi/history/piSession.ts";
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
