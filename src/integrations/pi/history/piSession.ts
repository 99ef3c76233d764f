import { resolve } from "node:path";
import { getAgentDir, type ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { DiscoveryOptions } from "./discovery.ts";

/**
 * What pbot needs to know about the Pi session it runs in, as plain data. Background work keeps
 * this, never `ctx`: after a session switch a captured `ctx` throws ("stale"), and a throw from a
 * timer crashes Pi.
 */
export interface PiSessionFacts {
	/** The workspace: Pi's working directory, absolute. */
	readonly cwd: string;
	readonly sessionId: string;
	/** The folder Pi writes this session to (a relative `sessionDir` setting resolved against cwd). */
	readonly sessionDir?: string;
	/** The current session file (it may not exist yet: Pi writes it with the first answer). */
	readonly sessionFile?: string;
	/** Pi's agent directory (`PI_CODING_AGENT_DIR` or `~/.pi/agent`). */
	readonly agentDir: string;
}

export function sessionFactsOf(ctx: ExtensionContext): PiSessionFacts {
	const cwd = resolve(ctx.cwd);
	const manager = ctx.sessionManager;
	const dir = manager.getSessionDir();
	const file = manager.getSessionFile();
	return {
		cwd,
		sessionId: manager.getSessionId(),
		...(dir ? { sessionDir: resolve(cwd, dir) } : {}),
		...(file ? { sessionFile: resolve(cwd, file) } : {}),
		agentDir: getAgentDir(),
	};
}

/**
 * The four sources the specification names (docs/architecture.md, "Inside Pi"): the current session's folder, Pi's native default folder for
 * the workspace, the current session file, and (by header) sessions forked from the workspace's.
 */
export function discoveryOptionsOf(facts: PiSessionFacts): DiscoveryOptions {
	return {
		workspace: facts.cwd,
		agentDir: facts.agentDir,
		...(facts.sessionDir ? { scanDirs: [facts.sessionDir] } : {}),
		...(facts.sessionFile ? { files: [facts.sessionFile] } : {}),
	};
}
