import { homedir } from "node:os";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { piAgentDir } from "../../src/integrations/pi/history/agentDir.ts";

const saved = process.env.PI_CODING_AGENT_DIR;
afterEach(() => {
	if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
	else process.env.PI_CODING_AGENT_DIR = saved;
});

describe("piAgentDir", () => {
	it("is Pi's own getAgentDir, without loading Pi's SDK: unset, absolute, ~ and ~/ forms", () => {
		for (const value of [undefined, "", "/tmp/some agent dir", "~", "~/pi-agent", "relative/dir", "~other/x"]) {
			if (value === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = value;
			expect(piAgentDir(), String(value)).toBe(getAgentDir());
		}
		delete process.env.PI_CODING_AGENT_DIR;
		expect(piAgentDir().startsWith(homedir())).toBe(true);
	});
});
