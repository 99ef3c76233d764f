import { type BigIntStats, closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/**
 * Never follows a symbolic link and never waits: a FIFO, a device or a link where one of pbot's
 * files should be is refused (a cloned repository can carry either), not read.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * A regular file's first `length` bytes (all of it when absent) and its `stat` as of the read, or
 * `undefined` when there is none. Anything else at the name (a link, a FIFO, a folder) is an error
 * that says what it is. Synchronous: pbot's files are small and read whole, and a thread-pool round
 * trip per file cost more than the read.
 */
export function readRegularFile(path: string, length?: number): { readonly bytes: Buffer; readonly stat: BigIntStats } | undefined {
	let fd: number;
	try {
		fd = openSync(path, READ_FLAGS);
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return undefined;
		if (code === "ELOOP") throw new Error(`${path} is a symbolic link; not followed`);
		throw err;
	}
	try {
		const stat = fstatSync(fd, { bigint: true });
		if (!stat.isFile()) throw new Error(`${path} is not a regular file`);
		const size = length === undefined ? Number(stat.size) : Math.min(length, Number(stat.size));
		const bytes = Buffer.allocUnsafe(size);
		let got = 0;
		while (got < size) {
			const n = readSync(fd, bytes, got, size - got, got);
			if (n === 0) break;
			got += n;
		}
		return { bytes: got === size ? bytes : bytes.subarray(0, got), stat };
	} finally {
		closeSync(fd);
	}
}
