import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["test/**/*.test.ts"],
		testTimeout: 30_000,
		hookTimeout: 60_000,
		// A query command of the bin leaves a query server running for its workspace
		// (`src/cli/queryServer/`): tests that run the bin get none, unless they ask for one
		// (`test/cli/queryServer.test.ts`), so no process of theirs writes beside another's.
		env: { PBOT_HISTORY_SERVER: "off" },
	},
});
