import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSessionFromServices,
	createAgentSessionRuntime,
	createAgentSessionServices,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { createPbotHistory } from "../../src/integrations/pi/history/extension.ts";
import { HistoryRuntime } from "../../src/integrations/pi/history/runtime.ts";
import { waitFor } from "../helpers/waitFor.ts";

describe("session replacement inside Pi (AgentSessionRuntime)", () => {
	it("follows the new file after a new session, a switch and a fork, archives all, and leaves no watcher behind", async () => {
		const root = await mkdtemp(join(tmpdir(), "pbot-switch-"));
		const workspace = join(root, "ws");
		const agentDir = join(root, "agent");
		const previous = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = agentDir;
		const faux = registerFauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
		faux.setResponses(Array.from({ length: 50 }, (_, i) => () => fauxAssistantMessage(`answer ${i + 1}`)));
		const authStorage = AuthStorage.inMemory();
		authStorage.setRuntimeApiKey("faux", "k");
		const history = new HistoryRuntime();
		const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
		try {
			await mkdir(workspace, { recursive: true });
			const runtime = await createAgentSessionRuntime(
				async ({ cwd, agentDir: dir, sessionManager, sessionStartEvent }) => {
					const services = await createAgentSessionServices({
						cwd,
						agentDir: dir,
						authStorage,
						settingsManager,
						resourceLoaderOptions: {
							noExtensions: true,
							noSkills: true,
							noPromptTemplates: true,
							noThemes: true,
							noContextFiles: true,
							extensionFactories: [createPbotHistory(history)],
						},
					});
					return {
						...(await createAgentSessionFromServices({
							services,
							sessionManager,
							model: faux.getModel(),
							...(sessionStartEvent ? { sessionStartEvent } : {}),
						})),
						services,
						diagnostics: [],
					};
				},
				{ cwd: workspace, agentDir, sessionManager: SessionManager.create(workspace) },
			);
			runtime.setRebindSession((s) => s.bindExtensions({}));
			await runtime.session.bindExtensions({});
			await runtime.session.prompt("first session question");
			const firstFile = runtime.session.sessionFile;
			expect(history.following).toBe(firstFile);

			await runtime.newSession();
			await runtime.session.prompt("second session question");
			const secondFile = runtime.session.sessionFile;
			expect(secondFile).not.toBe(firstFile);
			await waitFor(() => history.following === secondFile, "following the new session's file");

			await runtime.switchSession(firstFile!);
			await waitFor(() => history.following === firstFile, "following the resumed file");

			// A fork of the first session at its answer. Pi gives a fork the process's cwd: the test
			// process moves into the workspace for it, as a person running Pi there would be.
			const answer = runtime.session.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "assistant");
			expect(answer).toBeDefined();
			const cwd = process.cwd();
			process.chdir(workspace);
			try {
				expect((await runtime.fork(answer!.id, { position: "at" })).cancelled).toBe(false);
			} finally {
				process.chdir(cwd);
			}
			const forkFile = runtime.session.sessionFile;
			expect(forkFile).not.toBe(firstFile);
			await waitFor(() => history.following === forkFile, "following the fork's file");
			await runtime.session.prompt("forked session question");

			// Every session is archived and searchable; the fork's copy of the first Q&A is shown once.
			const service = history.serviceFor({ cwd: workspace, sessionId: runtime.session.sessionId, agentDir });
			const hits = await service.search({ query: "session question" });
			expect(hits.kind === "hits" && hits.total).toBe(3);
			const forked = await service.search({ query: "forked session question" });
			expect(forked.kind === "hits" && forked.groups[0]?.hits[0]?.sessionId).toBe(runtime.session.sessionId);

			await runtime.session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
			expect(history.following).toBeUndefined();
			await history.settled();
			await runtime.dispose();
		} finally {
			faux.unregister();
			if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = previous;
			await rm(root, { recursive: true, force: true, maxRetries: 5 });
		}
	});
});
