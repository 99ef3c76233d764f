import { promises as fsp } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isValidId } from "../../services/history/model/ids.ts";
import { archivePath, historyDir } from "./archiveFiles.ts";
import { createArchiveHoldingLock } from "./archiveWrites.ts";
import { upcastArchive, type UpcastResult } from "./archiveShape.ts";
import { lockPathOf, withFileLock, type FileLockOptions } from "./fileLock.ts";
import { isInside, makePbotFolder } from "./paths.ts";
import { isTemporaryFile } from "./writeJsonAtomic.ts";

/**
 * Migration from the old location: `pbot/history/` under Pi's agent directory, where earlier pbot
 * versions kept the archives of every workspace together (docs/archive-format.md, "Older shapes").
 */

export interface MigrateOldArchivesOptions {
	/** The workspace whose `.pi/pbot/history/` receives the records. */
	readonly workspace: string;
	/** Pi's agent directory (`getAgentDir()`); the old records are in its `pbot/history/`. */
	readonly agentDir: string;
	/** Session ids of the workspace's discovered sessions: a record of one of them belongs here. */
	readonly sessionIds?: Iterable<string>;
	/** Folders of the workspace's native session files: a record whose legacy `file` lies in one belongs here. */
	readonly sessionDirs?: readonly string[];
	readonly lock?: FileLockOptions;
}

export interface MigrationReport {
	/** Session ids copied into the workspace. */
	readonly copied: readonly string[];
	/** Records of this workspace that the workspace already had (left as they were). */
	readonly alreadyPresent: readonly string[];
	/** Records that belong to other workspaces (left alone). */
	readonly otherWorkspaces: number;
	/** Records that could not be read, for a person; the old files stay as they are. */
	readonly problems: readonly string[];
}

/** The old location of archives under Pi's agent directory. */
export function oldHistoryDir(agentDir: string): string {
	return join(agentDir, "pbot", "history");
}

/**
 * Copies the old records that belong to the workspace and are missing from its history folder.
 * A record belongs when its session id is one of `sessionIds`, or the workspace (`cwd`,
 * `workspace`) it recorded lies in the workspace, or its legacy `file` (or `sessionDir`) lies in
 * the workspace or one of `sessionDirs`, or it sits in a sub-folder named as Pi names the
 * workspace's session folder (`--<path>--`). The copy has no path field. Nothing in the workspace
 * is overwritten and nothing in the old location is changed.
 */
export async function migrateOldArchives(options: MigrateOldArchivesOptions): Promise<MigrationReport> {
	const workspace = resolve(options.workspace);
	const ids = new Set(options.sessionIds ?? []);
	const dirs = (options.sessionDirs ?? []).map((d) => resolve(workspace, d));
	const copied: string[] = [];
	const alreadyPresent: string[] = [];
	const problems: string[] = [];
	let otherWorkspaces = 0;

	for (const { file, name, inWorkspaceFolder } of await oldRecordFiles(oldHistoryDir(options.agentDir), workspace)) {
		let result: UpcastResult;
		try {
			result = upcastArchive(JSON.parse(await fsp.readFile(file, "utf8")), { lenient: true });
		} catch (err) {
			problems.push(`${name}: ${(err as Error).message}`);
			continue;
		}
		const { archive, paths } = result;
		const sessionId = archive.session.sessionId;
		const belongs =
			inWorkspaceFolder ||
			ids.has(sessionId) ||
			paths.workspaces.some((p) => isInside(p, workspace)) ||
			[...paths.files, ...paths.sessionDirs].some((p) => isInside(p, workspace) || dirs.some((d) => isInside(p, d)));
		if (!belongs) {
			otherWorkspaces++;
			continue;
		}
		if (!isValidId(sessionId)) {
			problems.push(`${name}: session id ${JSON.stringify(sessionId.slice(0, 80))} is not a valid id; not copied`);
			continue;
		}
		const target = archivePath(workspace, sessionId);
		makePbotFolder(dirname(historyDir(workspace)), historyDir(workspace));
		const wrote = await withFileLock(
			lockPathOf(target),
			// Made only if still absent, as an ingest makes archives (without the lock: see `writeArchive`).
			() => createArchiveHoldingLock(workspace, archive),
			options.lock,
		);
		(wrote ? copied : alreadyPresent).push(sessionId);
	}
	return { copied, alreadyPresent, otherWorkspaces, problems };
}

interface OldRecordFile {
	readonly file: string;
	/** For messages: the name relative to the old folder. */
	readonly name: string;
	/** In a sub-folder named after the workspace as Pi names session folders. */
	readonly inWorkspaceFolder: boolean;
}

/** `*.json` files of the old folder and of its sub-folders (one level), in name order. */
async function oldRecordFiles(dir: string, workspace: string): Promise<OldRecordFile[]> {
	const out: OldRecordFile[] = [];
	const own = encodedFolderName(workspace);
	for (const entry of await entries(dir)) {
		if (entry.isFile() && isRecordName(entry.name)) out.push({ file: join(dir, entry.name), name: entry.name, inWorkspaceFolder: false });
		else if (entry.isDirectory()) {
			for (const inner of await entries(join(dir, entry.name))) {
				if (inner.isFile() && isRecordName(inner.name)) {
					out.push({ file: join(dir, entry.name, inner.name), name: `${entry.name}/${inner.name}`, inWorkspaceFolder: entry.name === own });
				}
			}
		}
	}
	return out;
}

async function entries(dir: string) {
	try {
		return (await fsp.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
	} catch {
		return [];
	}
}

function isRecordName(name: string): boolean {
	return name.endsWith(".json") && !isTemporaryFile(name);
}

/** Pi's name for a workspace's session folder (`--home-dev-app--`). */
function encodedFolderName(workspace: string): string {
	return `--${workspace.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}
