/**
 * The session id in a Pi session file name (`<time>_<session id>.jsonl`), from a path or name.
 * Only the id is kept: the path itself must never reach an archive.
 */
export function sessionIdFromFileName(pathOrName: string): string | undefined {
	const base = pathOrName.split(/[\\/]/).pop() ?? "";
	const match = /_([A-Za-z0-9-]{8,64})\.jsonl$/.exec(base);
	return match?.[1];
}
