export {
	ArchiveError,
	type ArchiveErrorCode,
	archivePath,
	dropLegacyFields,
	HISTORY_DIR,
	historyDir,
	listArchiveIds,
	PBOT_DIR,
	parseArchive,
	readArchive,
	readArchiveCleaning,
	readArchiveWithRevision,
} from "./archiveFiles.ts";
export { writeArchive, type WriteArchiveOptions } from "./archiveWrites.ts";
export { archiveRevisions } from "./archiveRevisions.ts";
export { sweepLeftovers } from "./leftovers.ts";
export { LEGACY_PATH_FIELDS, upcastArchive, type LegacyPaths, type UpcastResult } from "./archiveShape.ts";
export { FileLockTimeout, lockPathOf, tryFileLock, withFileLock, type FileLockOptions, type LockHolder } from "./fileLock.ts";
export { workspaceSummaryClaims } from "./summaryClaims.ts";
export { INGEST_LOCK_FILE, workspaceIngestLease } from "./ingestLease.ts";
export { isTemporaryFile, writeFileAtomic, writeJsonAtomic } from "./writeJsonAtomic.ts";
export { memoryArchiveStore, workspaceArchiveStore } from "./archiveStore.ts";
export { migrateOldArchives, oldHistoryDir, type MigrateOldArchivesOptions, type MigrationReport } from "./migrateOldArchives.ts";
export { checkPbotFolder, isInside, pathExists, UnsafePbotFolderError } from "./paths.ts";
export { TEXT_DIR, textDir, workspaceTextStore } from "./textFiles.ts";
export { readRegularFile } from "./regularFile.ts";
export { revisionOf } from "./writeJsonAtomic.ts";
