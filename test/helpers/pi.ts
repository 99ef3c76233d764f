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

type CustomFactory = Parameters<ExtensionUIContext["custom"]>[0];

/**
 * A UI context that records what pbot shows and answers `select` with a chooser. `custom()` works
 * as in the TUI (it resolves when the component calls `done`: the test drives it with
 * `openCustom`), or as in RPC mode (`rpc: true`: it resolves at once with undefined).
 */
export function recordingUi(choose: (title: string, options: string[]) => string | undefined = () => undefined, mode: { rpc?: boolean } = {}) {
	const shown: { kind: string; text: string }[] = [];
	let pending: { factory: CustomFactory; resolve: (value: unknown) => void } | undefined;
	const ui = new Proxy(
		{
			select: async (title: string, options: string[]) => {
				shown.push({ kind: "select", text: [title, ...options].join("\n") });
				return choose(title, options);
			},
			editor: async (title: string, text: string) => {
				shown.push({ kind: "editor", text: `${title}\n${text}` });
				return `${text}\nTYPED BY THE PERSON`;
			},
			notify: (text: string, level: string) => void shown.push({ kind: `notify:${level}`, text }),
			setStatus: (key: string, text: string | undefined) => void shown.push({ kind: `status:${key}`, text: text ?? "(cleared)" }),
			custom: (factory: CustomFactory) => {
				if (mode.rpc) return Promise.resolve(undefined);
				return new Promise((resolve) => (pending = { factory, resolve }));
			},
		} as Record<string, unknown>,
		{ get: (target, key) => (key in target ? target[key as string] : () => undefined) },
	) as unknown as ExtensionUIContext;
	return {
		ui,
		shown,
		/** Whether a `custom()` component is waiting to be opened. */
		hasCustom: () => pending !== undefined,
		/** Builds the waiting component with a stub TUI; its `done` resolves the `custom()` call. */
		openCustom: async (rows = 30) => {
			const { factory, resolve } = pending!;
			pending = undefined;
			const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t, inverse: (t: string) => `>${t}<` };
			return factory({ terminal: { rows, columns: 100 }, requestRender() {} } as never, theme as never, {} as never, resolve as never);
		},
	};
}
