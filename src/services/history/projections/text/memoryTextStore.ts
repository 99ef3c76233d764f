import type { StoredFileReader, TextReadOptions, TextStore } from "../../service/ports.ts";

/** Projections in memory: the service's store when it is given none (tests, in-memory archives). */
export function memoryTextStore(): TextStore & { readonly files: Map<string, Buffer> } {
	const files = new Map<string, Buffer>();
	let heads: Buffer | undefined;
	let pack: Buffer | undefined;
	// Each stored buffer is a file: a write makes another (its identity, as a file's inode would be).
	const identities = new WeakMap<Buffer, string>();
	let written = 0;
	const identityOf = (bytes: Buffer | undefined) => {
		if (!bytes) return undefined;
		let identity = identities.get(bytes);
		if (identity === undefined) identities.set(bytes, (identity = `memory-${++written}`));
		return identity;
	};
	return {
		files,
		list: async () => [...files.keys()],
		read: async (sessionId, options) => {
			const bytes = files.get(sessionId);
			if (bytes && options?.identity) options.identity(identityOf(bytes) as string);
			return readPart(bytes, options);
		},
		readChunks: async (sessionId, { offset, length }, into, onChunk) => {
			const bytes = files.get(sessionId);
			if (!bytes || bytes.length < offset + length) return false;
			// Through `into` like a file, so a caller that kept a chunk would see it overwritten here too.
			for (let done = 0; done < length; ) {
				const n = bytes.copy(into, 0, offset + done, offset + Math.min(length, done + into.length));
				onChunk(into.subarray(0, n), offset + done);
				done += n;
			}
			return true;
		},
		write: async (sessionId, bytes) => {
			files.set(sessionId, Buffer.from(bytes));
		},
		remove: async (sessionId) => {
			files.delete(sessionId);
		},
		clear: async () => {
			files.clear();
			heads = undefined;
			pack = undefined;
		},
		readHeads: async (options) => readPart(heads, options),
		writeHeads: async (bytes) => {
			heads = Buffer.from(bytes);
		},
		openFile: async (sessionId) => reader(files.get(sessionId), identityOf(files.get(sessionId))),
		removeIf: async (sessionId, identity) => identityOf(files.get(sessionId)) === identity && files.delete(sessionId),
		openPack: async () => reader(pack, identityOf(pack)),
		writePack: async (fill) => {
			const pieces: Buffer[] = [];
			await fill((bytes) => pieces.push(Buffer.from(bytes)));
			pack = Buffer.concat(pieces);
		},
	};
}

/** A stored file's bytes as a reader by range (`TextStore.openFile`, `openPack`). */
function reader(bytes: Buffer | undefined, identity: string | undefined): StoredFileReader | undefined {
	if (bytes === undefined) return undefined;
	return {
		size: bytes.length,
		...(identity !== undefined ? { identity } : {}),
		read: (into, offset, length) => bytes.copy(into, 0, Math.min(offset, bytes.length), Math.min(bytes.length, offset + length)),
		close: () => undefined,
	};
}

/** What `TextStore.read` gives of `bytes` (a stored file) for `options`. */
function readPart(bytes: Buffer | undefined, options: TextReadOptions = {}): Buffer | undefined {
	if (bytes === undefined) return undefined;
	const offset = Math.min(options.offset ?? 0, bytes.length);
	const first = bytes.subarray(offset, options.length === undefined ? bytes.length : Math.min(bytes.length, offset + options.length));
	if (!options.extent || first.length < (options.length ?? Infinity)) return first;
	return bytes.subarray(offset, Math.min(bytes.length, offset + Math.max(first.length, options.extent(first))));
}
