/**
 * The histories a query server keeps open between commands (`server.ts`), each with its search text
 * in memory and its session folders watched.
 */
import { resolve } from "node:path";
import { piAgentDir } from "../../integrations/pi/history/agentDir.ts";
import { FolderWatch } from "../../integrations/pi/history/folderWatch.ts";
import type { HistoryService } from "../../services/history/service/historyService.ts";
import { workspaceOf, type WorkspaceOptions } from "../workspaceOptions.ts";
import { checkedOptions, openFromOptions } from "../workspaceService.ts";

/** Histories kept open at once (other `--sessions` or `--agent-dir`): the least recently used one is let go. */
const MAX_OPEN = 2;

/**
 * The histories the server keeps open, one per set of options (`--sessions`, `--agent-dir`), for
 * its own workspace only: a command naming another is marked `declined` (its client runs it).
 */
export class KeptServices {
	/** Each open history (most recently used last), with the watch of its session folders. */
	private readonly kept = new Map<string, { readonly service: HistoryService; readonly watch: FolderWatch }>();
	/** Where the history's messages go: the command running's stderr and terminal. */
	current: { say: (text: string) => void; status: ((text: string | undefined) => void) | undefined } = { say: () => {}, status: undefined };
	/** The command running named another workspace. */
	declined = false;

	constructor(
		private readonly workspace: string,
		private readonly keepText: number,
	) {}

	readonly open = (opts: WorkspaceOptions, cwd: string): HistoryService => {
		if (workspaceOf(opts, cwd) !== this.workspace) {
			this.declined = true;
			throw new Error("not this server's workspace");
		}
		// Checked each time, as each command's own process would (a folder deleted since: exit 2).
		const checked = checkedOptions(opts, cwd);
		const key = JSON.stringify([checked.sessionDirs ?? [], checked.agentDir ?? resolve(piAgentDir())]);
		let kept = this.kept.get(key);
		if (kept) this.kept.delete(key);
		else {
			const watch = new FolderWatch();
			const service = openFromOptions(
				opts,
				cwd,
				(text) => this.current.say(text),
				(text) => this.current.status?.(text),
				{ keepText: this.keepText, watch },
			);
			kept = { service, watch };
		}
		this.kept.set(key, kept);
		for (const [old, { watch }] of this.kept)
			if (this.kept.size > MAX_OPEN) {
				watch.close();
				this.kept.delete(old);
			}
		return kept.service;
	};

	all(): HistoryService[] {
		return [...this.kept.values()].map((k) => k.service);
	}

	keptBytes(): number {
		return this.all().reduce((sum, s) => sum + s.keptTextBytes, 0);
	}
}
