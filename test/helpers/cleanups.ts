import { rm } from "node:fs/promises";
import { afterAll, afterEach } from "vitest";

/**
 * The folders a test file makes (push each one), removed after each test (`"each"`) or once after
 * all of them: what fifteen test files had each written out again.
 */
export function foldersRemovedAfter(when: "each" | "all"): string[] {
	const folders: string[] = [];
	(when === "each" ? afterEach : afterAll)(async () => {
		for (const dir of folders.splice(0)) await rm(dir, { recursive: true, force: true });
	});
	return folders;
}
