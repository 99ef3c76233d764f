import type { ExtensionAPI, ExtensionFactory } from "@mariozechner/pi-coding-agent";
import { registerHistoryCommand } from "./command.ts";
import { sessionFactsOf } from "./piSession.ts";
import { HistoryRuntime } from "./runtime.ts";
import { registerHistoryTool } from "./tool.ts";

/**
 * pbot history inside Pi: the `/pbot history` command, the `pbot_history` tool, and the events that
 * keep the archive current. Translation only; the logic is in the history service.
 *
 * - `session_start`: follow the current session file live and ingest the workspace's sessions;
 * - `agent_end`: pick up what the interaction wrote;
 * - `session_shutdown`: stop the live tail (nothing is left running).
 *
 * Tests pass their own runtime to watch it; Pi loads the default export.
 */
export function createPbotHistory(runtime: HistoryRuntime = new HistoryRuntime()): ExtensionFactory {
	return (pi: ExtensionAPI) => {
		registerHistoryCommand(pi, runtime);
		registerHistoryTool(pi, runtime);
		pi.on("session_start", async (_event, ctx) => {
			runtime.start(sessionFactsOf(ctx));
		});
		pi.on("agent_end", async (_event, ctx) => {
			void runtime.refresh(sessionFactsOf(ctx));
		});
		pi.on("session_shutdown", async () => {
			runtime.stop();
		});
	};
}

export default function pbotHistory(pi: ExtensionAPI): void {
	void createPbotHistory()(pi);
}
