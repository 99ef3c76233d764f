import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Pi's agent directory (`$PI_CODING_AGENT_DIR`, `~` expanded, or `~/.pi/agent`), computed as Pi's
 * own `getAgentDir()` does for the published package (app name `pi`, config folder `.pi`; a test
 * compares the two). The CLI computes it here instead of importing Pi's SDK for one function:
 * loading the SDK costs a process about 100 MB of memory before it has read anything. Inside Pi,
 * the extension takes the directory from Pi itself.
 */
export function piAgentDir(): string {
	const fromEnv = process.env.PI_CODING_AGENT_DIR;
	if (fromEnv) return expandTilde(fromEnv);
	return join(homedir(), ".pi", "agent");
}

function expandTilde(path: string): string {
	if (path === "~") return homedir();
	if (path.startsWith("~/")) return homedir() + path.slice(1);
	return path;
}
