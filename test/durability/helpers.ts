/** Workspaces for the durability tests: native sessions outside the workspace, Pi's agent dir apart. */
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionArchive } from "../../src/services/history/projections/archive.ts";
import type { HistoryEvent, SummaryReady } from "../../src/services/history/model/events.ts";
import type { HistoryService } from "../../src/services/history/service/historyService.ts";
import { historyDir } from "../../src/storage/history-files/index.ts";
import { FIXTURES_DIR } from "../helpers/fixtures.ts";
import { afterEach } from "vitest";

export interface NativeWorkspace {
	readonly root: string;
	/** The workspace (its path has a space in it). */
	readonly workspace: string;
	/** Native session files (copies of the fixtures), outside the workspace. */
	readonly natives: string;
	/** Pi's agent directory (empty unless a test fills it). */
	readonly agentDir: string;
	cleanup(): Promise<void>;
}

export async function nativeWorkspace(prefix = "pbot-durable-"): Promise<NativeWorkspace> {
	const root = await mkdtemp(join(tmpdir(), prefix));
	const workspace = join(root, "my project");
	const natives = join(root, "natives");
	const agentDir = join(root, "agent");
	for (const dir of [workspace, natives, agentDir]) await mkdir(dir, { recursive: true });
	for (const name of await readdir(FIXTURES_DIR)) if (name.endsWith(".jsonl")) await cp(join(FIXTURES_DIR, name), join(natives, name));
	return { root, workspace, natives, agentDir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** Every archive file's text, by name. */
export async function archiveTexts(workspace: string): Promise<Record<string, string>> {
	const dir = historyDir(workspace);
	const out: Record<string, string> = {};
	let names: string[] = [];
	try {
		names = await readdir(dir);
	} catch {
		return out;
	}
	for (const name of names.filter((n) => n.endsWith(".json")).sort()) out[name] = await readFile(join(dir, name), "utf8");
	return out;
}

/** Every archive, parsed, by session id. */
export async function archivesOf(workspace: string): Promise<Record<string, SessionArchive>> {
	const out: Record<string, SessionArchive> = {};
	for (const [name, text] of Object.entries(await archiveTexts(workspace))) out[name.slice(0, -5)] = JSON.parse(text) as SessionArchive;
	return out;
}

/** A summary made ready, with a text and time that depend on its id only. */
export function readyEvent(sessionId: string, id: string, by = "faux/faux-1", at = "2026-04-01T00:00:00.000Z"): SummaryReady {
	return { type: "SummaryReady", sessionId, id, text: `Summary of ${id} by ${by}.`, model: by, at };
}

/** Makes every other pending summary of the service's sessions ready (through the service's write path). */
export async function readyEveryOther(service: HistoryService, sessionIds: readonly string[]): Promise<string[]> {
	const made: string[] = [];
	const events: HistoryEvent[] = [];
	await service.load();
	for (const sessionId of sessionIds) {
		const archive = service.getArchive(sessionId);
		Object.values(archive?.summaries ?? {}).forEach((s, i) => {
			if (i % 2 === 0 && s.status === "pending") {
				events.push(readyEvent(sessionId, s.id));
				made.push(s.id);
			}
		});
	}
	await service.applyEvents(events);
	return made;
}

/** Registers cleanup after each test and returns a maker of fresh native workspaces. */
export function useNativeWorkspaces(): () => Promise<NativeWorkspace> {
	const cleanups: (() => Promise<void>)[] = [];
	afterEach(async () => {
		for (const c of cleanups.splice(0)) await c();
	});
	return async () => {
		const ws = await nativeWorkspace();
		cleanups.push(ws.cleanup);
		return ws;
	};
}
