/**
 * A deterministic fake model for driving the real Pi TUI in end-to-end tests. It answers
 * "ANSWER: <question>"; asked to "use pbot_history to find <word>" (or "to read <id>") it calls the tool.
 * Registered through `pi.registerProvider` with `streamSimple`, which survives the registry
 * refresh of interactive mode (Pi's interactive mode re-reads models.json when it starts).
 */
import { appendFileSync } from "node:fs";
import { fauxAssistantMessage, fauxToolCall, getApiProvider, registerFauxProvider, type Context } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

function lastUserText(context: Context): string {
	const user = [...context.messages].reverse().find((m) => m.role === "user");
	if (!user) return "";
	return typeof user.content === "string" ? user.content : user.content.map((b) => ("text" in b ? b.text : "")).join(" ");
}

/** Set by a test: every summary call is logged to this file (one line each), so the test can count them. */
const SUMMARY_LOG = process.env.PBOT_FAKE_SUMMARY_LOG;
/** Set by a test: summary calls answer after this long, so what shows while one runs can be seen. */
const SUMMARY_DELAY_MS = Number(process.env.PBOT_FAKE_SUMMARY_DELAY_MS ?? 0);

export default function (pi: ExtensionAPI) {
	const faux = registerFauxProvider({ api: "pbot-fake-api", provider: "pbot-fake", models: [{ id: "fake-1" }] });
	const reply = async (context: Context) => {
		if ((context.systemPrompt ?? "").includes("You write summaries")) {
			if (SUMMARY_LOG) appendFileSync(SUMMARY_LOG, `${lastUserText(context).slice(0, 60).replace(/\s+/g, " ")}\n`);
			await new Promise((r) => setTimeout(r, SUMMARY_DELAY_MS));
			return fauxAssistantMessage("SUMMARY");
		}
		const last = context.messages[context.messages.length - 1];
		if (last?.role === "toolResult") return fauxAssistantMessage("Found it in the history.");
		const text = lastUserText(context);
		const ask = /use pbot_history to find (\S+)/.exec(text);
		if (ask) return fauxAssistantMessage([fauxToolCall("pbot_history", { action: "search", query: ask[1] })], { stopReason: "toolUse" });
		const read = /use pbot_history to read (\S+)/.exec(text);
		if (read) return fauxAssistantMessage([fauxToolCall("pbot_history", { action: "read", id: read[1] })], { stopReason: "toolUse" });
		return fauxAssistantMessage(`ANSWER: ${text}`);
	};
	faux.setResponses(Array.from({ length: 500 }, () => reply));
	pi.registerProvider("pbot-fake", {
		streamSimple: getApiProvider("pbot-fake-api")!.streamSimple,
		baseUrl: "http://127.0.0.1:9",
		apiKey: "fake-key",
		api: "pbot-fake-api",
		models: [
			{
				id: "fake-1",
				name: "Fake",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 128000,
				maxTokens: 4096,
			},
		],
	});
}
