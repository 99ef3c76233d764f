import { mkdtemp, readdir, readFile, rm, writeFile, mkdir, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileAtomic, writeFileAtomic, writeJsonAtomic } from "../../src/storage/history-files/writeJsonAtomic.ts";

let dir: string;
beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "pbot-atomic-"));
});
afterEach(async () => {
	await chmod(dir, 0o755).catch(() => undefined);
	await rm(dir, { recursive: true, force: true });
});

describe("writeFileAtomic", () => {
	it("replaces the file and leaves no temporary file behind", async () => {
		const file = join(dir, "a.json");
		await writeFile(file, "old");
		await writeJsonAtomic(file, { n: 1 });
		expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ n: 1 });
		expect(await readdir(dir)).toEqual(["a.json"]);
	});

	it("applies concurrent writes to one path in order, each whole", async () => {
		const file = join(dir, "b.json");
		await Promise.all(Array.from({ length: 20 }, (_, i) => writeJsonAtomic(file, { i, pad: "x".repeat(10_000) })));
		expect(JSON.parse(await readFile(file, "utf8")).i).toBe(19);
		expect(await readdir(dir)).toEqual(["b.json"]);
	});

	it("keeps the old file and cleans up when the write fails", async () => {
		const sub = join(dir, "ro");
		await mkdir(sub);
		const file = join(sub, "c.json");
		await writeFile(file, "old");
		await chmod(sub, 0o500);
		// root ignores folder permissions; make the target a folder instead so rename fails for everyone
		await chmod(sub, 0o755);
		const target = join(sub, "d.json");
		await mkdir(target);
		await expect(writeFileAtomic(target, "new")).rejects.toThrow();
		expect(await readdir(sub)).toEqual(["c.json", "d.json"]);
		expect(await readFile(file, "utf8")).toBe("old");
	});
});

describe("createFileAtomic", () => {
	it("makes a file that is absent, and leaves one that is present as it is", async () => {
		const file = join(dir, "new.json");
		expect(await createFileAtomic(file, "first")).toBe("created");
		expect(await readFile(file, "utf8")).toBe("first");
		expect(await createFileAtomic(file, "second")).toBe("exists");
		expect(await readFile(file, "utf8")).toBe("first");
		expect(await readdir(dir)).toEqual(["new.json"]);
	});

	it("lets exactly one of concurrent creators make the file, whole", async () => {
		const file = join(dir, "race.json");
		const texts = Array.from({ length: 12 }, (_, i) => `writer ${i} `.repeat(5_000));
		const outcomes = await Promise.all(texts.map((t) => createFileAtomic(file, t)));
		expect(outcomes.filter((o) => o === "created")).toHaveLength(1);
		expect(await readFile(file, "utf8")).toBe(texts[outcomes.indexOf("created")]);
		expect(await readdir(dir)).toEqual(["race.json"]);
	});
});
