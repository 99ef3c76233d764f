import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SETTINGS_FILE, workspaceSettingsStore } from "../../src/storage/history-files/settingsFile.ts";

const roots: string[] = [];
afterEach(async () => {
	for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});
async function workspace(): Promise<string> {
	const root = await mkdtemp(join(tmpdir(), "pbot-settings-"));
	roots.push(root);
	return root;
}

describe("the workspace's settings file", () => {
	it("defaults when absent, keeps what is saved, merges changes, and makes .pi/pbot with its .gitignore", async () => {
		const ws = await workspace();
		const store = workspaceSettingsStore(ws);
		expect(await store.load()).toEqual({ threshold: 50 });
		await store.save({ backfill: "off" });
		await store.save({ threshold: 7 });
		expect(await store.load()).toEqual({ backfill: "off", threshold: 7 });
		expect(JSON.parse(await readFile(join(ws, SETTINGS_FILE), "utf8"))).toEqual({
			format: "pbot-settings",
			version: 1,
			summaries: { backfill: "off", threshold: 7 },
		});
		expect(await readFile(join(ws, ".pi", "pbot", ".gitignore"), "utf8")).toContain("*");
	});

	it("reads a damaged or foreign file as the defaults, and a bad field as its default", async () => {
		const ws = await workspace();
		await mkdir(join(ws, ".pi", "pbot"), { recursive: true });
		const store = workspaceSettingsStore(ws);
		for (const text of ["{not json", JSON.stringify({ format: "other", version: 1, summaries: { backfill: "on" } }), "null"]) {
			await writeFile(join(ws, SETTINGS_FILE), text);
			expect(await store.load()).toEqual({ threshold: 50 });
		}
		await writeFile(join(ws, SETTINGS_FILE), JSON.stringify({ format: "pbot-settings", version: 1, summaries: { backfill: "yes", threshold: -3 } }));
		expect(await store.load()).toEqual({ threshold: 50 });
	});

	it("refuses a link in its place (never read through), and replaces it rather than writing through it", async () => {
		const ws = await workspace();
		await mkdir(join(ws, ".pi", "pbot"), { recursive: true });
		const outside = join(ws, "outside.json");
		await writeFile(outside, JSON.stringify({ format: "pbot-settings", version: 1, summaries: { backfill: "on", threshold: 1 } }));
		await symlink(outside, join(ws, SETTINGS_FILE));
		const store = workspaceSettingsStore(ws);
		await expect(store.load()).rejects.toThrow(/not a regular file|link/i);
		await expect(store.save({ backfill: "off" })).rejects.toThrow(/not a regular file|link/i);
		expect(JSON.parse(await readFile(outside, "utf8")).summaries).toEqual({ backfill: "on", threshold: 1 });
	});
});
