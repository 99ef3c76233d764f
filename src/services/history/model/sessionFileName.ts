/**
 * The session id in a Pi session file name (`<time>_<session id>.jsonl`), from a path or name.
 * Only the id is kept: the path itself must never reach an archive.
 */
export function sessionIdFromFileName(pathOrName: string): string | undefined {
	// The name after the last separator of either kind (a header may name a Windows path). Sliced,
	// not split: a refresh takes this for every session file, every time.
	const base = pathOrName.slice(Math.max(pathOrName.lastIndexOf("/"), pathOrName.lastIndexOf("\\")) + 1);
	return FILE_ID.exec(base)?.[1];
}

const FILE_ID = /_([A-Za-z0-9-]{8,64})\.jsonl$/;
