import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FIXTURES_DIR } from "./fixtures.ts";

/** A temporary workspace with copies of the fixture session files in `<ws>/pi-sessions`. */
export async function fixtureWorkspace(prefix = "pbot-ws-"): Promise<{ root: string; workspace: string; sessions: string; cleanup: () => Promise<void> }> {
	const root = await mkdtemp(join(tmpdir(), prefix));
	const workspace = join(root, "my project");
	const sessions = join(workspace, "pi-sessions");
	await mkdir(sessions, { recursive: true });
	for (const name of await readdir(FIXTURES_DIR)) if (name.endsWith(".jsonl")) await cp(join(FIXTURES_DIR, name), join(sessions, name));
	return { root, workspace, sessions, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** SHA-256 of every file under a folder, by relative name. */
export async function hashTree(dir: string): Promise<Record<string, string>> {
	const out: Record<string, string> = {};
	for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
		if (!entry.isFile()) continue;
		const full = join(entry.parentPath, entry.name);
		out[full.slice(dir.length)] = createHash("sha256")
			.update(await readFile(full))
			.digest("hex");
	}
	return out;
}
