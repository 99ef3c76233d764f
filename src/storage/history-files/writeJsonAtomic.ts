import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Writes to the same path are queued, so two writes from one process never interleave. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Writes `text` to `file` atomically: a temporary file in the same folder, fsync, rename over the
 * target, fsync of the folder. A crash leaves the old file or the new one, never a torn one; a
 * failed write removes its temporary file.
 */
export function writeFileAtomic(file: string, text: string): Promise<void> {
	const previous = queues.get(file) ?? Promise.resolve();
	const next = previous.catch(() => undefined).then(() => writeNow(file, text));
	queues.set(file, next);
	return next.finally(() => {
		if (queues.get(file) === next) queues.delete(file);
	});
}

/** `writeFileAtomic` of pretty-printed JSON with a trailing newline. */
export function writeJsonAtomic(file: string, value: unknown): Promise<void> {
	return writeFileAtomic(file, `${JSON.stringify(value, null, 1)}\n`);
}

/** Temporary files are named so that readers of the folder can recognise and skip them. */
export function isTemporaryFile(name: string): boolean {
	return name.startsWith(".") && name.endsWith(".tmp");
}

async function writeNow(file: string, text: string): Promise<void> {
	const dir = dirname(file);
	const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
	let renamed = false;
	try {
		const handle = await open(temp, "wx", 0o644);
		try {
			await handle.writeFile(text, "utf8");
			await handle.sync();
		} finally {
			await handle.close();
		}
		await rename(temp, file);
		renamed = true;
		await syncDirectory(dir);
	} finally {
		if (!renamed) await rm(temp, { force: true });
	}
}

/** Makes the rename itself durable. Some file systems refuse to open a folder; that is not an error. */
async function syncDirectory(dir: string): Promise<void> {
	let handle;
	try {
		handle = await open(dir, "r");
		await handle.sync();
	} catch {
		// best effort
	} finally {
		await handle?.close();
	}
}
