export { ArchiveError, archivePath, HISTORY_DIR, historyDir, listArchiveIds, PBOT_DIR, parseArchive, readArchive, writeArchive } from "./archiveFiles.ts";
export { isTemporaryFile, writeFileAtomic, writeJsonAtomic } from "./writeJsonAtomic.ts";
export { memoryArchiveStore, workspaceArchiveStore } from "./archiveStore.ts";
