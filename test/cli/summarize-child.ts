/**
 * Runs `pbot-history summarize` in a child process with the faux provider registered, for the
 * Ctrl+C test: each model call announces itself on stderr and, with `HOLD=1`, waits until aborted.
 */
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { runCli } from "../../src/cli/main.ts";

const faux = registerFauxProvider({ api: "faux-cli-api", provider: "faux", models: [{ id: "faux-1" }], ...(process.env.HOLD ? { tokensPerSecond: 1 } : {}) });
faux.setResponses(
	Array.from({ length: 100 }, (_, i) => () => {
		process.stderr.write(`CALL ${i + 1}\n`);
		return fauxAssistantMessage(`summary number ${i + 1} ${"slowly ".repeat(process.env.HOLD ? 200 : 1)}`);
	}),
);
process.exitCode = await runCli(process.argv.slice(2));
