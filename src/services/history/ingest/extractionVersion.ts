/**
 * Version of what the pipeline extracts from a session file. Raise it whenever a change makes the
 * same file give other Q&A, branches or plans: checkpoints of another version are ignored, so
 * every file is read again under the new rules. (Its own module: checkpoints need it without
 * loading the pipeline.)
 */
export const EXTRACTION_VERSION = 1;
