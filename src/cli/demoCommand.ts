/**
 * `pbot-history demo`: the bundled sample sessions copied into a workspace (a temporary one unless
 * `--keep` names it), ingested, then toured (`demoTour.ts`). Loaded only when the demo runs.
 */
import { rmSync, statSync } from "node:fs";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openWorkspaceHistory } from "../integrations/pi/history/workspaceHistory.ts";
import { historyDir } from "../storage/history-files/index.ts";
import { demoTour } from "./demoTour.ts";
import { UsageError } from "./usageError.ts";
import { wrapText } from "./format.ts";
import { formatIngestReport } from "./ingestCommand.ts";

export interface DemoCommandOptions {
	readonly keep?: string;
	readonly query: string;
	/** The sample sessions (`fixtures/sessions` of the package). */
	readonly samples: string;
	readonly cwd: string;
	readonly color: boolean;
	/** The terminal's width, which the output fits in (as every command's); none: whole lines. */
	readonly columns?: number | undefined;
	readonly stdout: (text: string) => void;
}

export async function runDemo(options: DemoCommandOptions): Promise<void> {
	const { samples, stdout } = options;
	if (options.keep && statSync(resolve(options.cwd, options.keep), { throwIfNoEntry: false })?.isDirectory() === false)
		throw new UsageError(`--keep: ${resolve(options.cwd, options.keep)} is not a folder (name a folder, or one to make)`);
	const workspace = options.keep ? resolve(options.cwd, options.keep) : await mkdtemp(join(tmpdir(), "pbot-demo-"));
	const sessions = join(workspace, "pi-sessions");
	const files = (await readdir(samples)).filter((n) => n.endsWith(".jsonl"));
	await cp(samples, sessions, { recursive: true, filter: (src) => !src.endsWith(".json") || src === samples });
	// A temporary workspace is the demo's own, removed however the demo ends: also when the reader of
	// its output goes away (`demo | head` ends the process at the next write) or on Ctrl+C.
	const removeNow = () => {
		if (!options.keep) rmSync(workspace, { recursive: true, force: true });
	};
	const onSigint = () => {
		removeNow();
		process.exit(130);
	};
	process.once("exit", removeNow);
	process.once("SIGINT", onSigint);
	try {
		// (Paths whole, at any width: they are there to be copied.)
		stdout(`Demo workspace: ${workspace}\nCopied ${files.length} sample session file(s) from ${samples}\n`);
		const service = openWorkspaceHistory({ workspace, sessionDirs: [sessions] });
		const report = await service.ingest();
		stdout(formatIngestReport(report, historyDir(workspace), options.columns));
		await demoTour(service, { workspace, query: options.query, color: options.color, columns: options.columns, stdout });
	} finally {
		// The handlers go only once the workspace is gone: a Ctrl+C during the removal removes it too.
		if (!options.keep) {
			await rm(workspace, { recursive: true, force: true });
			stdout(
				`\nRemoved the demo workspace ${workspace}.\n${wrapText("To keep one and try the commands above: pbot-history demo --keep DIR", options.columns)}`,
			);
		}
		process.off("exit", removeNow);
		process.off("SIGINT", onSigint);
	}
}
