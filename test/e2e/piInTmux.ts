import { execFileSync, spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { waitFor } from "../helpers/waitFor.ts";

/** Whether tmux is here (the e2e tests skip without it). */
export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const REPO = resolve(import.meta.dirname, "../..");
const PI = join(REPO, "node_modules", ".bin", "pi");

/**
 * The real Pi TUI in a tmux session: `pi` with the fake model and pbot loaded from this package
 * (its `pi.extensions` manifest). Keys are typed with send-keys; the screen is polled with
 * capture-pane for the expected text, never read after a fixed sleep.
 */
export function piInTmux(name: string) {
	const session = `${name}-${process.pid}`;
	const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
	const screen = () => tmux("capture-pane", "-p", "-t", session);
	const see = (text: string | RegExp, what = String(text)) =>
		waitFor(() => (typeof text === "string" ? screen().includes(text) : text.test(screen())), `"${what}" on screen:\n${screen()}`, 20_000, 100);
	return {
		screen,
		see,
		type: (text: string) => tmux("send-keys", "-t", session, "-l", text),
		press: (...keys: string[]) => tmux("send-keys", "-t", session, ...keys),
		/** Starts Pi in `workspace` on a terminal of `columns`×`rows` (with `extraEnv`: no spaces), and waits for its footer. */
		start: async (workspace: string, agentDir: string, columns: number, rows: number, extraEnv: Readonly<Record<string, string>> = {}) => {
			const extra = Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`);
			const env = ["env", `PI_CODING_AGENT_DIR=${agentDir}`, "PI_OFFLINE=1", "PI_TELEMETRY=0", ...extra].join(" ");
			const command = `${env} ${PI} -ne -ns -np -nc --provider pbot-fake --model fake-1 -e ${join(REPO, "test/e2e/fake-provider.ts")} -e ${REPO}`;
			tmux("new-session", "-d", "-s", session, "-x", String(columns), "-y", String(rows), "-c", workspace, command);
			await see("fake-1", "the footer with the model");
		},
		stop: () => void spawnSync("tmux", ["kill-session", "-t", session]),
	};
}
