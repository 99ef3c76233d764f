import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { fileDiscovery, forgetSessionHeads, nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";
import { discoveryOptionsOf } from "../../src/integrations/pi/history/piSession.ts";
import { fixturePath } from "../helpers/fixtures.ts";
import { foldersRemovedAfter } from "../helpers/cleanups.ts";

const cleanups = foldersRemovedAfter("each");
async function temp(): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), "pbot-disc-"));
	cleanups.push(dir);
	return dir;
}

/** A copy of a real fixture under a new session id, with the header's cwd (and parent) set. */
async function sessionFile(dir: string, key: string, id: string, cwd: string, parentSession?: string): Promise<string> {
	const text = await readFile(fixturePath(key), "utf8");
	const newline = text.indexOf("\n");
	const header = JSON.parse(text.slice(0, newline));
	const rewritten = { ...header, id, cwd, ...(parentSession ? { parentSession } : {}) };
	if (!parentSession) delete rewritten.parentSession;
	const file = join(dir, `2026-03-01T00-00-00-000Z_${id}.jsonl`);
	await mkdir(dir, { recursive: true });
	await writeFile(file, JSON.stringify(rewritten) + text.slice(newline));
	return file;
}

describe("nativeSessionDir", () => {
	it("equals Pi's own folder for awkward workspace paths, without creating it", async () => {
		const root = await temp();
		const agentDir = join(root, "agent");
		const previous = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = agentDir;
		try {
			for (const name of ["plain", "with space", "a-b", "colon:name", "unicode-中文-🎉", "dots.and..more", "trailing-"]) {
				const cwd = join(root, "ws", name, "deeper");
				const ours = nativeSessionDir(cwd, agentDir);
				await expect(stat(ours)).rejects.toThrow(); // not created by us
				expect(SessionManager.create(cwd).getSessionDir()).toBe(ours); // Pi creates it
			}
		} finally {
			if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = previous;
		}
	});
});

describe("fileDiscovery with Pi's four sources", () => {
	it("finds the native folder's, the session folder's, the current file and forked children; excludes other workspaces", async () => {
		const root = await temp();
		const workspace = join(root, "ws");
		const other = join(root, "other-project");
		const agentDir = join(root, "agent");
		const native = nativeSessionDir(workspace, agentDir);
		const flat = join(workspace, ".pi", "sessions"); // a relative sessionDir setting, resolved
		const elsewhere = join(root, "scratch"); // where the current file was opened from (pi --session)

		const a = await sessionFile(native, "many-qa-72", "0190aaaa-0000-7000-8000-00000000000a", workspace);
		const b = await sessionFile(flat, "tools-thinking", "0190aaaa-0000-7000-8000-00000000000b", join(workspace, "sub", "dir"));
		const foreign = await sessionFile(flat, "error-reply", "0190aaaa-0000-7000-8000-00000000000f", other);
		const child = await sessionFile(flat, "fork", "0190aaaa-0000-7000-8000-00000000000c", other, a);
		const grandchild = await sessionFile(flat, "clone-at-user", "0190aaaa-0000-7000-8000-00000000000d", "/somewhere/else", child);
		const current = await sessionFile(elsewhere, "steer-followup-abort", "0190aaaa-0000-7000-8000-00000000000e", "/not/this/workspace");
		const notYetWritten = join(flat, "2026-03-02T00-00-00-000Z_0190aaaa-0000-7000-8000-000000000099.jsonl");
		await writeFile(join(flat, "2026-03-03T00-00-00-000Z_0190aaaa-0000-7000-8000-000000000098.jsonl"), ""); // named, empty

		const { sources, warnings } = await fileDiscovery(
			discoveryOptionsOf({ cwd: workspace, sessionId: "x", sessionDir: flat, sessionFile: current, agentDir }),
		).discover();
		const found = sources.map((s) => s.key).sort();
		expect(found).toEqual([a, b, child, grandchild, current].sort());
		expect(found).not.toContain(foreign);
		expect(found).not.toContain(notYetWritten);
		expect(warnings).toEqual([]);
		// Asking did not create Pi's folder for a workspace that has none.
		const ghost = join(root, "ghost");
		await fileDiscovery({ workspace: ghost, agentDir }).discover();
		await expect(stat(nativeSessionDir(ghost, agentDir))).rejects.toThrow();
	});

	it("skips the current file silently when Pi has not written it yet", async () => {
		const root = await temp();
		const { sources, warnings } = await fileDiscovery({ workspace: root, files: [join(root, "2026_0190aaaa-0000-7000-8000-000000000001.jsonl")] }).discover();
		expect(sources).toEqual([]);
		expect(warnings).toEqual([]);
	});
});

describe("the workspace's cache of session headers", () => {
	it("lets a new process take files without reading their headers while they are the same files, and reads them again when not", async () => {
		const root = await temp();
		const workspace = join(root, "ws");
		const other = join(root, "zz"); // as long as "ws": a header rewritten in place keeps its length
		const flat = join(root, "sessions");
		await mkdir(join(workspace, ".pi", "pbot"), { recursive: true });
		const a = await sessionFile(flat, "many-qa-72", "0190bbbb-0000-7000-8000-00000000000a", workspace);
		const b = await sessionFile(flat, "tools-thinking", "0190bbbb-0000-7000-8000-00000000000b", other);
		const fork = await sessionFile(flat, "fork", "0190bbbb-0000-7000-8000-00000000000c", other, a);
		const discover = async () => (await fileDiscovery({ workspace, scanDirs: [flat] }).discover()).sources.map((s) => s.key).sort();

		forgetSessionHeads();
		expect(await discover()).toEqual([a, fork].sort());
		const cache = join(workspace, ".pi", "pbot", "session-heads.cache");
		const written = await readFile(cache, "utf8");
		// No path in it: names and hashes only.
		expect(written).not.toContain(root);
		expect(written).toContain("0190bbbb-0000-7000-8000-00000000000a.jsonl");

		// b's header rewritten in place (same inode, same length) to say it belongs here: a new process
		// trusts the cache and does not read it — the proof that the headers were not read again.
		const text = await readFile(b, "utf8");
		await writeFile(b, text.replace(`"cwd":${JSON.stringify(other)}`, `"cwd":${JSON.stringify(workspace)}`));
		forgetSessionHeads();
		expect(await discover()).toEqual([a, fork].sort());

		// Replaced by a new file (another inode): read again.
		await writeFile(`${b}.new`, await readFile(b));
		await rm(b);
		await rename(`${b}.new`, b);
		forgetSessionHeads();
		expect(await discover()).toEqual([a, b, fork].sort());

		// Made for another workspace (its path's hash): ignored; damaged: ignored.
		for (const bad of [written.replace(/"scope":"[^"]+"/, '"scope":"elsewhere"'), "{not json"]) {
			await writeFile(cache, bad);
			forgetSessionHeads();
			expect(await discover()).toEqual([a, b, fork].sort());
		}

		// Without `.pi/pbot`, discovery writes nothing.
		const bare = join(root, "bare");
		await mkdir(bare);
		forgetSessionHeads();
		await fileDiscovery({ workspace: bare, scanDirs: [flat] }).discover();
		await expect(stat(join(bare, ".pi"))).rejects.toThrow();
	});
});
