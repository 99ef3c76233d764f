import type { TextStore } from "../ports.ts";

/** Projections in memory: the service's store when it is given none (tests, in-memory archives). */
export function memoryTextStore(): TextStore & { readonly files: Map<string, Buffer> } {
	const files = new Map<string, Buffer>();
	return {
		files,
		list: async () => [...files.keys()],
		read: async (sessionId, length) => {
			const bytes = files.get(sessionId);
			return bytes === undefined ? undefined : length === undefined ? bytes : bytes.subarray(0, length);
		},
		write: async (sessionId, bytes) => {
			files.set(sessionId, Buffer.from(bytes));
		},
		remove: async (sessionId) => {
			files.delete(sessionId);
		},
	};
}
