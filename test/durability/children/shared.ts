/** What the child processes and the tests that check them must agree on. */
import { createHash } from "node:crypto";
import { fauxAssistantMessage, registerFauxProvider, type Context } from "@mariozechner/pi-ai";
import { piSummaryModel } from "../../../src/integrations/pi/history/piSummaryModel.ts";
import type { SummaryModel } from "../../../src/services/history/summaries/summaryModel.ts";

/** The summarizing clock of the crash test: a clean run must give the same `madeAt`. */
export const PINNED_NOW = new Date("2026-04-01T00:00:00.000Z");

let registrations = 0;

/**
 * Pi-ai's faux provider as the summary model, answering with a text that depends only on the
 * prompt (and on `tag`, unless it is `clean`), so a clean run gives the same texts.
 */
export function fauxSummaryModel(tag: string): SummaryModel {
	const faux = registerFauxProvider({ api: `faux-${tag}-${process.pid}-${registrations++}`, provider: "faux", models: [{ id: "faux-1" }] });
	const answer = (context: Context) => {
		const digest = createHash("sha256")
			.update(JSON.stringify(context.messages.map((m) => m.content)))
			.digest("hex")
			.slice(0, 16);
		return fauxAssistantMessage(`Summary ${digest}${tag === "clean" ? "" : ` by ${tag}`}.`);
	};
	faux.setResponses(Array.from({ length: 100_000 }, () => answer));
	return piSummaryModel(faux.getModel(), { apiKey: "faux-key" });
}
