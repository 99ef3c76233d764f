import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nativeSessionDir } from "../../src/integrations/pi/history/discovery.ts";

const REPO = resolve(import.meta.dirname, "../..");
const PI = join(REPO, "node_modules", ".bin", "pi");

/** The real `pi -p` process: `/pbot history <word>` prints its hits on stdout, where `> file` catches them. */
describe("pbot in Pi's print mode (the real pi -p)", () => {
	let root: string | undefined;
	afterAll(async () => {
		if (root) await rm(root, { recursive: true, force: true });
	});

	it("prints the hits on stdout, not stderr", async () => {
		root = await mkdtemp(join(tmpdir(), "pbot-print-"));
		const workspace = join(root, "workspace");
		const agentDir = join(root, "agent");
		await mkdir(workspace, { recursive: true });
		const sm = SessionManager.create(workspace, nativeSessionDir(workspace, agentDir));
		sm.appendMessage({ role: "user", content: [{ type: "text", text: "Where do the flamingo records live?" }], timestamp: Date.now() });
		sm.appendMessage(fauxAssistantMessage("In the pink ledger."));
		const run = spawnSync(
			PI,
			[
				"-p",
				"-ne",
				"-ns",
				"-np",
				"-nc",
				"--provider",
				"pbot-fake",
				"--model",
				"fake-1",
				"-e",
				join(REPO, "test/e2e/fake-provider.ts"),
				"-e",
				REPO,
				"/pbot history flamingo",
			],
			{ cwd: workspace, encoding: "utf8", env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_TELEMETRY: "0" }, timeout: 60_000 },
		);
		expect(run.status, run.stderr).toBe(0);
		expect(run.stdout).toMatch(/1 hit\(s\) for "flamingo"/);
		expect(run.stdout).toContain("Where do the flamingo records live?");
		expect(run.stderr).not.toContain("flamingo records");
	});
});
