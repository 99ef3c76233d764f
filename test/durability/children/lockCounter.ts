/**
 * Child process for the lock test: increments a counter file `rounds` times, each time reading
 * and rewriting it under the lock with a pause in between, so that without mutual exclusion
 * increments would be lost.
 *   node --import tsx lockCounter.ts <counterFile> <rounds>
 */
import { readFile, writeFile } from "node:fs/promises";
import { lockPathOf, withFileLock } from "../../../src/storage/history-files/fileLock.ts";

const [file, roundsText] = process.argv.slice(2) as [string, string];
for (let i = 0; i < Number(roundsText); i++) {
	await withFileLock(lockPathOf(file), async () => {
		const n = Number(await readFile(file, "utf8"));
		await new Promise((r) => setTimeout(r, Math.random() * 2));
		await writeFile(file, String(n + 1));
	});
}
