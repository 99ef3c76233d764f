import { resolve } from "node:path";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { HistoryService } from "../../../services/history/historyService.ts";
import { workspaceArchiveStore } from "../../../storage/history-files/index.ts";
import { fileDiscovery, type DiscoveryOptions } from "./discovery.ts";

export interface WorkspaceHistoryOptions {
	readonly workspace: string;
	/** Folders named by the person: all their session files are taken. */
	readonly sessionDirs?: readonly string[];
	/** Folders scanned for sessions of this workspace (by header `cwd` and fork parents). */
	readonly scanDirs?: readonly string[];
	readonly files?: readonly string[];
	/** Pi's agent directory; defaults to Pi's own (`PI_CODING_AGENT_DIR` or `~/.pi/agent`). */
	readonly agentDir?: string;
	/** Scan Pi's native default session folder of the workspace (default: when no folder is named). */
	readonly scanNativeDir?: boolean;
}

/** The history service of a workspace, wired to its archive folder and its Pi session files. */
export function openWorkspaceHistory(options: WorkspaceHistoryOptions): HistoryService {
	const workspace = resolve(options.workspace);
	const scanNative = options.scanNativeDir ?? (options.sessionDirs ?? []).length === 0;
	const discovery: DiscoveryOptions = {
		workspace,
		...(options.sessionDirs ? { sessionDirs: options.sessionDirs } : {}),
		...(options.scanDirs ? { scanDirs: options.scanDirs } : {}),
		...(options.files ? { files: options.files } : {}),
		...(scanNative ? { agentDir: options.agentDir ?? getAgentDir() } : {}),
	};
	return new HistoryService({ store: workspaceArchiveStore(workspace), discovery: fileDiscovery(discovery) });
}
