import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { CheckpointStore, SourceCheckpoint } from "../../services/history/service/ports.ts";
import { EXTRACTION_VERSION } from "../../services/history/ingest/extractionVersion.ts";
import { PBOT_DIR } from "./archiveFiles.ts";
import { makePbotFolder } from "./paths.ts";
import { replaceFileSync } from "./writeJsonAtomic.ts";
import { readJsonDocument } from "./regularFile.ts";

/** `.pi/pbot/checkpoints.json`, relative to the workspace. */
export const CHECKPOINTS_FILE = join(PBOT_DIR, "checkpoints.json");
const FORMAT = "pbot-history-checkpoints";
const VERSION = 1;

/**
 * What the checkpoint file holds. Keys are `<sessionId>/<file name>` — never a path, so the file
 * is as portable as the archives beside it. `extraction` is the pipeline's `EXTRACTION_VERSION`:
 * checkpoints of another version are ignored (the files are read again with the new rules).
 */
interface CheckpointFile {
	readonly format: typeof FORMAT;
	readonly version: typeof VERSION;
	readonly extraction: number;
	readonly files: Readonly<Record<string, SourceCheckpoint>>;
}

/**
 * The workspace's per-file checkpoints. Written atomically (temporary file and rename), merged
 * over what is on disk. Two processes saving at once may drop each other's new entries: that only
 * costs a re-read of those files later, never a missed change (a checkpoint is trusted only when
 * its file's size, mtime and first bytes are unchanged and its archive is present).
 */
export function workspaceCheckpointStore(workspace: string): CheckpointStore {
	const file = join(resolve(workspace), CHECKPOINTS_FILE);
	/** The file as the last load or save left it (size, mtime, inode): what `changed` compares with. */
	let seen: string | undefined;
	const stamp = () => {
		const s = statSync(file, { throwIfNoEntry: false });
		return s ? `${s.size}:${s.mtimeMs}:${s.ino}` : "";
	};
	return {
		load: async () => {
			seen = stamp();
			return readCheckpoints(file);
		},
		changed: () => seen !== undefined && stamp() !== seen,
		save: async (checkpoints) => {
			if (checkpoints.size === 0) return;
			const merged = new Map(await readCheckpoints(file));
			for (const [key, value] of checkpoints) merged.set(key, value);
			const body: CheckpointFile = {
				format: FORMAT,
				version: VERSION,
				extraction: EXTRACTION_VERSION,
				files: Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
			};
			makePbotFolder(dirname(file));
			// Atomic, not synced: the file is derived (lost, it costs a re-read of the files), and the
			// archives it vouches for were made durable before it is saved. Two syncs here held Pi's
			// catch-up after every run 150–350 ms (the journal commits what else is dirty).
			replaceFileSync(file, Buffer.from(`${JSON.stringify(body)}\n`, "utf8"));
			seen = stamp();
		},
	};
}

/** Checkpoints in memory, for tests. */
export function memoryCheckpointStore(): CheckpointStore & { readonly saved: ReadonlyMap<string, SourceCheckpoint> } {
	const saved = new Map<string, SourceCheckpoint>();
	return {
		saved,
		load: async () => new Map(saved),
		save: async (checkpoints) => {
			for (const [key, value] of checkpoints) saved.set(key, value);
		},
	};
}

async function readCheckpoints(file: string): Promise<Map<string, SourceCheckpoint>> {
	// A missing or damaged file costs one re-read of every session file: it is rewritten on the next save.
	// (A link or FIFO in its place is an error the service reports.)
	const value = readJsonDocument(file, FORMAT, VERSION) as Partial<CheckpointFile> | undefined;
	if (value?.extraction !== EXTRACTION_VERSION || typeof value.files !== "object" || value.files === null) return new Map();
	const out = new Map<string, SourceCheckpoint>();
	for (const [key, c] of Object.entries(value.files)) {
		if (isCheckpoint(c))
			out.set(key, {
				size: c.size,
				mtimeMs: c.mtimeMs,
				headHash: c.headHash,
				sessionId: c.sessionId,
				...(typeof c.stamp === "string" ? { stamp: c.stamp } : {}),
			});
	}
	return out;
}

function isCheckpoint(c: unknown): c is SourceCheckpoint {
	if (typeof c !== "object" || c === null) return false;
	const v = c as Record<string, unknown>;
	return typeof v.size === "number" && typeof v.mtimeMs === "number" && typeof v.headHash === "string" && typeof v.sessionId === "string";
}
