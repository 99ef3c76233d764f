import { getEventListeners } from "node:events";
import { fauxAssistantMessage, registerFauxProvider, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { piSummaryModel } from "../../src/integrations/pi/history/piSummaryModel.ts";

let faux: FauxProviderRegistration | undefined;
afterEach(() => {
	faux?.unregister();
	faux = undefined;
});

describe("piSummaryModel", () => {
	it("leaves no abort listener on the pass's signal, even when the provider leaves its own behind on every call, and still stops on it", async () => {
		faux = registerFauxProvider({ provider: "faux-leak", models: [{ id: "leak-1" }] });
		// A provider whose SDK adds an abort listener per call and never removes it (Anthropic's SDK on
		// a failed call): on one signal shared by a pass, 11 of them make Node warn on stderr.
		faux.setResponses(
			Array.from({ length: 20 }, (_, i) => (_context: unknown, options: { signal?: AbortSignal } | undefined) => {
				options?.signal?.addEventListener("abort", () => undefined);
				return i % 2 === 0 ? fauxAssistantMessage([], { stopReason: "error", errorMessage: "Connection error." }) : fauxAssistantMessage(`ok ${i}`);
			}),
		);
		const model = piSummaryModel(faux.getModel(), { apiKey: "k" });
		const pass = new AbortController();
		const replies = [];
		for (let i = 0; i < 20; i++) replies.push(await model.complete({ system: "s", user: `u${i}` }, pass.signal));
		expect(replies.filter((r) => r.kind === "error")).toHaveLength(10);
		expect(replies.filter((r) => r.kind === "ok")).toHaveLength(10);
		expect(getEventListeners(pass.signal, "abort")).toHaveLength(0);

		// The pass's signal still stops a call in flight, and a call made once it is aborted stops at once.
		faux.unregister();
		faux = registerFauxProvider({ provider: "faux-slow", models: [{ id: "slow-1" }], tokensPerSecond: 20 });
		faux.setResponses(Array.from({ length: 3 }, () => fauxAssistantMessage("a long answer ".repeat(50))));
		const slow = piSummaryModel(faux.getModel(), { apiKey: "k" });
		const inFlight = slow.complete({ system: "s", user: "u" }, pass.signal);
		setTimeout(() => pass.abort(), 50);
		expect(await inFlight).toEqual({ kind: "aborted" });
		expect(await slow.complete({ system: "s", user: "u" }, pass.signal)).toEqual({ kind: "aborted" });
		expect(getEventListeners(pass.signal, "abort")).toHaveLength(0);
	});
});
