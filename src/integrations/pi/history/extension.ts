import type { AgentEndEvent, ExtensionAPI, ExtensionContext, ExtensionFactory } from "@mariozechner/pi-coding-agent";
import { registerHistoryCommand } from "./command.ts";
import { sessionFactsOf } from "./piSession.ts";
import type { ModelAuth } from "./piSummaryModel.ts";
import type { BackfillQuestion } from "./backfillQuestion.ts";
import { HistoryRuntime } from "./runtime.ts";
import { registerHistoryTool } from "./tool.ts";

/**
 * pbot history inside Pi: the `/pbot history` command, the `pbot_history` tool, and the events that
 * keep the archive current. Translation only; the logic is in the history service.
 *
 * - `session_start`: follow the current session file live and ingest the workspace's sessions;
 * - `agent_start`: the run's messages are read when a query asks or the run ends, not one by one;
 * - `agent_end`: pick up what the interaction wrote; if it ended normally, make due summaries once
 *   Pi is idle, with the model current at that moment;
 * - new input (`input`, `before_agent_start`, a user `message_start`), `session_before_switch`,
 *   `session_before_fork`: cancel the summary in flight;
 * - `session_shutdown`: cancel, and stop the live tail (nothing is left running).
 *
 * Tests pass their own runtime to watch it; Pi loads the default export.
 */
export function createPbotHistory(runtime: HistoryRuntime = new HistoryRuntime()): ExtensionFactory {
	return (pi: ExtensionAPI) => {
		registerHistoryCommand(pi, runtime);
		registerHistoryTool(pi, runtime);
		pi.on("session_start", async (_event, ctx) => {
			runtime.start(sessionFactsOf(ctx), ctx.hasUI ? (text) => ctx.ui.setStatus("pbot-progress", text) : undefined);
		});
		pi.on("agent_start", async () => {
			runtime.agentStarted();
		});
		pi.on("agent_end", async (event, ctx) => {
			const facts = sessionFactsOf(ctx);
			void runtime.refresh(facts);
			if (!endedNormally(event.messages)) return;
			// Resolve everything from ctx now: after a session switch a captured ctx throws.
			const model = ctx.model;
			const auth = model ? await resolveAuth(ctx) : { error: "no model" };
			const setStatus = ctx.hasUI ? (text: string | undefined) => ctx.ui.setStatus("pbot", text) : () => undefined;
			const ask = ctx.hasUI ? askBackfill(ctx) : undefined;
			runtime.scheduleSummaries(() => {
				if (!isIdle(ctx)) return;
				void runtime.summarize(facts, model, auth, setStatus, ask);
			});
		});
		const cancel = async () => runtime.cancelSummaries();
		pi.on("input", cancel);
		pi.on("before_agent_start", cancel);
		pi.on("message_start", async (event) => {
			if (event.message.role === "user") runtime.cancelSummaries();
		});
		pi.on("session_before_switch", cancel);
		pi.on("session_before_fork", cancel);
		pi.on("session_shutdown", async () => {
			runtime.stop();
		});
	};
}

export default function pbotHistory(pi: ExtensionAPI): void {
	void createPbotHistory()(pi);
}

/** The run's last assistant message stopped normally (not aborted, errored or cut short). */
function endedNormally(messages: AgentEndEvent["messages"]): boolean {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as AgentEndEvent["messages"][number];
		if (m.role === "assistant") return m.stopReason === "stop";
	}
	return false;
}

async function resolveAuth(ctx: ExtensionContext): Promise<ModelAuth | { error: string }> {
	try {
		const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model!);
		if (!auth.ok) return { error: auth.error };
		return { ...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}), ...(auth.headers ? { headers: auth.headers } : {}) };
	} catch (err) {
		return { error: (err as Error).message };
	}
}

/** How long the backfill question waits for an answer (an RPC client may never give one). */
const ASK_TIMEOUT_MS = 120_000;
/** The first row is the safe one: an Enter meant for the editor must not spend money. */
const NOT_NOW = "Not now: only this session's new summaries (ask again in the next Pi session)";
const YES = "Yes: summarize the earlier work too";
const NO = "No: never for earlier work in this workspace (/pbot summaries on changes it)";

/** The backfill question as a dialog of Pi's; a stale context (a switch meanwhile) is no answer. */
function askBackfill(ctx: ExtensionContext): BackfillQuestion {
	return async (question, signal) => {
		try {
			const choice = await ctx.ui.select(question.title, [NOT_NOW, YES, NO], { signal, timeout: ASK_TIMEOUT_MS });
			if (choice === YES) return "on";
			if (choice === NO) return "off";
			// Not now, Escape or the timeout: said where the person looks, not in the model's tool results.
			if (!signal.aborted)
				ctx.ui.notify(
					`pbot: the earlier work (${question.what}) waits; only this session's new summaries are made. /pbot summaries on makes it, /pbot summaries off stops this question.`,
					"info",
				);
			return undefined;
		} catch {
			return undefined;
		}
	};
}

/** `ctx.isIdle()`, or false when the context went stale (the session switched meanwhile). */
function isIdle(ctx: ExtensionContext): boolean {
	try {
		return ctx.isIdle();
	} catch {
		return false;
	}
}
