/**
 * A real Pi agent session, headless, for integration tests: Pi's SDK with the faux provider of
 * pi-ai and pbot loaded as an extension factory (the same module instance as the test).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registerFauxProvider, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	ModelRegistry,
	SessionManager,
	SettingsManager,
	type AgentSession,
	type ExtensionUIContext,
} from "@mariozechner/pi-coding-agent";
import { createPbotHistory } from "../../src/integrations/pi/history/extension.ts";
import { HistoryRuntime } from "../../src/integrations/pi/history/runtime.ts";

export interface PiHarness {
	readonly root: string;
	readonly workspace: string;
	readonly agentDir: string;
	readonly session: AgentSession;
	readonly faux: FauxProviderRegistration;
	readonly runtime: HistoryRuntime;
	readonly errors: unknown[];
	dispose(): Promise<void>;
}

export interface PiHarnessOptions {
	/** Reuse a workspace (and agent dir) from another harness. */
	readonly root?: string;
	/** Where Pi writes sessions: default is Pi's native folder for the workspace under the agent dir. */
	readonly sessionDir?: string;
	readonly uiContext?: ExtensionUIContext;
	readonly sessionManager?: (workspace: string, agentDir: string) => SessionManager;
}

export async function startPi(options: PiHarnessOptions = {}): Promise<PiHarness> {
	const root = options.root ?? (await mkdtemp(join(tmpdir(), "pbot-pi-")));
	const workspace = join(root, "workspace");
	const agentDir = join(root, "agent");
	await mkdir(workspace, { recursive: true });
	await mkdir(agentDir, { recursive: true });
	const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;

	const faux = registerFauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey("faux", "test-key");
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
	const runtime = new HistoryRuntime();
	const loader = new DefaultResourceLoader({
		cwd: workspace,
		agentDir,
		settingsManager,
		noExtensions: true,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		extensionFactories: [createPbotHistory(runtime)],
	});
	await loader.reload();
	const loadErrors = loader.getExtensions().errors;
	if (loadErrors.length > 0) throw new Error(`extension failed to load: ${JSON.stringify(loadErrors)}`);
	const sessionManager = options.sessionManager?.(workspace, agentDir) ?? SessionManager.create(workspace, options.sessionDir);
	const { session } = await createAgentSession({
		cwd: workspace,
		agentDir,
		model: faux.getModel(),
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
		settingsManager,
		resourceLoader: loader,
		sessionManager,
	});
	const errors: unknown[] = [];
	await session.bindExtensions({ ...(options.uiContext ? { uiContext: options.uiContext } : {}), onError: (e) => errors.push(e) });
	return {
		root,
		workspace,
		agentDir,
		session,
		faux,
		runtime,
		errors,
		async dispose() {
			await session.extensionRunner?.emit({ type: "session_shutdown", reason: "quit" });
			await runtime.settled();
			session.dispose?.();
			faux.unregister();
			if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
			if (!options.root) await rm(root, { recursive: true, force: true, maxRetries: 5 });
		},
	};
}

/** A UI context that records what pbot shows and answers `select` with a chooser. */
export function recordingUi(choose: (title: string, options: string[]) => string | undefined = () => undefined) {
	const shown: { kind: string; text: string }[] = [];
	let customFactory: Parameters<ExtensionUIContext["custom"]>[0] | undefined;
	const ui = new Proxy(
		{
			select: async (title: string, options: string[]) => {
				shown.push({ kind: "select", text: [title, ...options].join("\n") });
				return choose(title, options);
			},
			notify: (text: string, level: string) => void shown.push({ kind: `notify:${level}`, text }),
			setStatus: (key: string, text: string | undefined) => void shown.push({ kind: `status:${key}`, text: text ?? "(cleared)" }),
			custom: async (factory: Parameters<ExtensionUIContext["custom"]>[0]) => {
				customFactory = factory;
				return undefined;
			},
		} as Record<string, unknown>,
		{ get: (target, key) => (key in target ? target[key as string] : () => undefined) },
	) as unknown as ExtensionUIContext;
	return { ui, shown, lastCustom: () => customFactory };
}
