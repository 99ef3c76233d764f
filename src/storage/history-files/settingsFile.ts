import { dirname, join, resolve } from "node:path";
import { type BackfillSettings, type BackfillSettingsStore, DEFAULT_BACKFILL_THRESHOLD } from "../../services/history/summaries/backfill.ts";
import { PBOT_DIR } from "./archiveFiles.ts";
import { makePbotFolder } from "./paths.ts";
import { readJsonDocument } from "./regularFile.ts";
import { writeFileAtomic } from "./writeJsonAtomic.ts";

/** `.pi/pbot/settings.json`, relative to the workspace. */
export const SETTINGS_FILE = join(PBOT_DIR, "settings.json");
const FORMAT = "pbot-settings";
const VERSION = 1;

interface SettingsFile {
	readonly format: typeof FORMAT;
	readonly version: typeof VERSION;
	readonly summaries: { readonly backfill?: "on" | "off"; readonly threshold?: number };
}

/**
 * The workspace's pbot settings: the person's answer about summarizing past sessions and the
 * threshold above which they are asked. A missing or unreadable file means the defaults (and the
 * question is asked again); a link or FIFO in its place is refused, never followed or waited on.
 */
export function workspaceSettingsStore(workspace: string): BackfillSettingsStore {
	const file = join(resolve(workspace), SETTINGS_FILE);
	return {
		load: async () => readSettings(file),
		save: async (change) => {
			const merged = { ...readSettings(file), ...change };
			const body: SettingsFile = {
				format: FORMAT,
				version: VERSION,
				summaries: { ...(merged.backfill !== undefined ? { backfill: merged.backfill } : {}), threshold: merged.threshold },
			};
			makePbotFolder(dirname(file));
			await writeFileAtomic(file, `${JSON.stringify(body, null, "\t")}\n`);
		},
	};
}

/** Settings in memory, for tests and for a workspace whose `.pi/pbot` cannot be used. */
export function memorySettingsStore(initial: Partial<BackfillSettings> = {}): BackfillSettingsStore & { readonly current: () => BackfillSettings } {
	let settings: BackfillSettings = { threshold: DEFAULT_BACKFILL_THRESHOLD, ...initial };
	return {
		current: () => settings,
		load: async () => settings,
		save: async (change) => {
			settings = { ...settings, ...change };
		},
	};
}

function readSettings(file: string): BackfillSettings {
	const defaults: BackfillSettings = { threshold: DEFAULT_BACKFILL_THRESHOLD };
	const value = readJsonDocument(file, FORMAT, VERSION) as Partial<SettingsFile> | undefined;
	if (typeof value?.summaries !== "object" || value.summaries === null) return defaults;
	const { backfill, threshold } = value.summaries;
	return {
		...(backfill === "on" || backfill === "off" ? { backfill } : {}),
		threshold: typeof threshold === "number" && Number.isInteger(threshold) && threshold >= 0 ? threshold : DEFAULT_BACKFILL_THRESHOLD,
	};
}
