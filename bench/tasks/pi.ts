/**
 * pbot inside Pi, headless, the way `test/helpers/pi.ts` runs it: Pi's SDK (`createAgentSession`
 * with `DefaultResourceLoader`), the faux provider of pi-ai, and the extension factory — on a
 * workspace whose archives are present and whose sessions sit in the session folder Pi is given.
 * The `pbot_history` tool is called directly (its `execute`, as the model's call would run it):
 * from the moment the session starts (`session_start`, which starts pbot's background ingest) to
 * the first search answered, then every later query of the mix; then Pi's RSS. The same run
 * without the extension (another process) is the RSS baseline.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { peakRss } from "./wiring.ts";

const HELD_RESOLUTION_MS = 10;

export interface PiParams {
	readonly workspace: string;
	readonly agentDir: string;
	readonly sessionDir: string;
	readonly queries: readonly string[];
	readonly withExtension: boolean;
	/** Reads through the tool after the searches (ids from the hits). */
	readonly reads: number;
	/**
	 * A session file of `sessionDir` to resume as the current session (else a new one). With
	 * `exchanges`, that many exchanges are then written to it as Pi writes them, each followed by a
	 * search (`afterExchangeMs`): what a query costs in a long session that keeps growing.
	 */
	readonly current?: string;
	readonly exchanges?: number;
	/**
	 * Then an agent run (`session.prompt`, the faux model) of this many tool calls (`read` of a
	 * small file) and an answer, timed from the prompt to the run's end and pbot's catch-up after
	 * it (`runMs`, `runHeldMs`); without the extension, the same run is the baseline.
	 */
	readonly runSteps?: number;
}

export interface PiResult {
	readonly withExtension: boolean;
	/** Loader, session and binding (Pi's own start), ms. */
	readonly piStartMs: number;
	/** From `session_start` (binding the extensions) to the first search answered. */
	readonly firstQueryMs: number;
	/** Every later query of the mix. */
	readonly laterMs: readonly number[];
	/** Each search right after an exchange was written to the current session (`PiParams.exchanges`). */
	readonly afterExchangeMs: readonly number[];
	readonly readMs: readonly number[];
	/**
	 * The longest the event loop was held, from `session_start` to the last answer: how long a key
	 * pressed in Pi's terminal could wait before Pi even saw it, while pbot worked (its start's
	 * ingest, any rebuild, the searches and reads).
	 */
	readonly heldMs: number;
	/** The agent run (`PiParams.runSteps`): from the prompt to its end and pbot's work after it (ms); `NaN` without one. */
	readonly runMs: number;
	/** The longest the event loop was held during that run and after it (ms). */
	readonly runHeldMs: number;
	readonly hits: readonly number[];
	readonly rss: number;
	readonly heapUsed: number;
	readonly peakRss: number;
	readonly errors: readonly string[];
}

interface ToolDetails {
	readonly kind?: string;
	readonly total?: number;
	readonly groups?: readonly { readonly hits: readonly { readonly id: string }[] }[];
}

export async function piRun(p: PiParams): Promise<PiResult> {
	mkdirSync(p.workspace, { recursive: true });
	mkdirSync(p.agentDir, { recursive: true });
	process.env.PI_CODING_AGENT_DIR = p.agentDir;
	const t0 = performance.now();
	const { fauxAssistantMessage, registerFauxProvider } = await import("@mariozechner/pi-ai");
	const { AuthStorage, createAgentSession, DefaultResourceLoader, ModelRegistry, SessionManager, SettingsManager } = await import(
		"@mariozechner/pi-coding-agent"
	);
	// Only the run with the extension loads its modules.
	const pbot = p.withExtension ? await import("../../src/integrations/pi/history/extension.ts") : undefined;
	const runtime = p.withExtension ? new (await import("../../src/integrations/pi/history/runtime.ts")).HistoryRuntime() : undefined;
	const faux = registerFauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey("faux", "bench-key");
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
	const loader = new DefaultResourceLoader({
		cwd: p.workspace,
		agentDir: p.agentDir,
		settingsManager,
		noExtensions: true,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		extensionFactories: pbot ? [pbot.createPbotHistory(runtime)] : [],
	});
	await loader.reload();
	const loadErrors = loader.getExtensions().errors;
	if (loadErrors.length > 0) throw new Error(`extension failed to load: ${JSON.stringify(loadErrors)}`);
	const { session } = await createAgentSession({
		cwd: p.workspace,
		agentDir: p.agentDir,
		model: faux.getModel(),
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
		settingsManager,
		resourceLoader: loader,
		sessionManager: p.current ? SessionManager.open(p.current, p.sessionDir) : SessionManager.create(p.workspace, p.sessionDir),
	});
	const errors: string[] = [];
	// PBOT_BENCH_PROFILE=<file>: a CPU profile from `session_start` to the first search answered.
	const profile = p.withExtension ? await startProfile(process.env.PBOT_BENCH_PROFILE) : undefined;
	// A timer every 10 ms: its longest interval, less the 10 ms, is the longest the loop was held
	// (a key pressed as it began waited as long).
	const held = monitorEventLoopDelay({ resolution: HELD_RESOLUTION_MS });
	held.enable();
	const started = performance.now();
	await session.bindExtensions({ onError: (e) => void errors.push(String((e as { error?: unknown }).error ?? e)) });
	const bound = performance.now();

	let firstQueryMs = Number.NaN;
	const laterMs: number[] = [];
	const readMs: number[] = [];
	const afterExchangeMs: number[] = [];
	const hits: number[] = [];
	if (p.withExtension) {
		const tool = session.extensionRunner?.getToolDefinition("pbot_history");
		if (!tool) throw new Error("the pbot_history tool is not registered");
		const ctx = session.extensionRunner.createContext();
		const ids: string[] = [];
		const call = async (params: Record<string, unknown>): Promise<ToolDetails | undefined> => {
			try {
				const result = await tool.execute("bench", params as never, undefined, undefined, ctx);
				return result.details as ToolDetails;
			} catch (err) {
				errors.push(`${JSON.stringify(params)}: ${(err as Error).message}`);
				return undefined;
			}
		};
		for (const [i, query] of p.queries.entries()) {
			const s = performance.now();
			const details = await call({ action: "search", query });
			const end = performance.now();
			if (i === 0) {
				firstQueryMs = end - started;
				await profile?.();
			} else laterMs.push(end - s);
			hits.push(details?.total ?? -1);
			for (const g of details?.groups ?? []) for (const h of g.hits.slice(0, 2)) if (ids.length < p.reads) ids.push(h.id);
		}
		for (const id of ids) {
			const s = performance.now();
			await call({ action: "read", id });
			readMs.push(performance.now() - s);
		}
		// Exchanges written as Pi writes them mid-turn (a question, then its answer), each followed
		// by a search for a word of that question.
		for (let i = 0; i < (p.exchanges ?? 0); i++) {
			const manager = session.sessionManager;
			manager.appendMessage({ role: "user", content: [{ type: "text", text: `Where did we leave the bench heron ${i}?` }], timestamp: Date.now() });
			manager.appendMessage(fauxAssistantMessage(`By the pond, ${i}.`));
			const s = performance.now();
			const details = await call({ action: "search", query: `bench heron ${i}` });
			afterExchangeMs.push(performance.now() - s);
			if ((details?.total ?? 0) < 1) errors.push(`the exchange ${i} written to the current session was not found`);
		}
	}
	held.disable();
	const run = p.runSteps === undefined ? undefined : await agentRun(session, faux, p.workspace, p.runSteps, runtime);
	const memory = process.memoryUsage();
	const result: PiResult = {
		withExtension: p.withExtension,
		piStartMs: bound - t0,
		firstQueryMs,
		laterMs,
		afterExchangeMs,
		readMs,
		heldMs: Math.max(0, held.max / 1e6 - HELD_RESOLUTION_MS),
		runMs: run?.ms ?? Number.NaN,
		runHeldMs: run?.heldMs ?? Number.NaN,
		hits,
		rss: memory.rss,
		heapUsed: memory.heapUsed,
		peakRss: peakRss(),
		errors: errors.slice(0, 10),
	};
	await session.extensionRunner?.emit({ type: "session_shutdown", reason: "quit" } as never);
	session.dispose?.();
	faux.unregister();
	return result;
}

/**
 * An agent run as Pi makes one: the prompt, `steps` tool calls (each an assistant message and a
 * tool result appended to the session file) and the answer; then, with pbot, its catch-up after
 * `agent_end` (the run's messages read, archived, searchable). Timed to the end of both.
 */
async function agentRun(
	session: { prompt(text: string): Promise<void> },
	faux: { setResponses(responses: unknown[]): void },
	workspace: string,
	steps: number,
	runtime: { settled(): Promise<void> } | undefined,
): Promise<{ ms: number; heldMs: number }> {
	const { fauxAssistantMessage, fauxToolCall } = await import("@mariozechner/pi-ai");
	writeFileSync(join(workspace, "bench-note.txt"), "A small file the faux model reads.\n");
	await runtime?.settled();
	faux.setResponses([
		...Array.from({ length: steps }, () => fauxAssistantMessage([fauxToolCall("read", { path: "bench-note.txt" })], { stopReason: "toolUse" })),
		fauxAssistantMessage("Read it; all is well."),
	]);
	const held = monitorEventLoopDelay({ resolution: HELD_RESOLUTION_MS });
	held.enable();
	const s = performance.now();
	await session.prompt("Read bench-note.txt a few times, please.");
	await runtime?.settled();
	const ms = performance.now() - s;
	held.disable();
	return { ms, heldMs: Math.max(0, held.max / 1e6 - HELD_RESOLUTION_MS) };
}

/** Starts V8's sampling profiler when `file` is set; the function returned stops it and writes the profile there. */
async function startProfile(file: string | undefined): Promise<(() => Promise<void>) | undefined> {
	if (!file) return undefined;
	const { Session } = await import("node:inspector");
	const { writeFileSync } = await import("node:fs");
	const session = new Session();
	session.connect();
	const post = (method: string, params?: object) =>
		new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
	await post("Profiler.enable");
	await post("Profiler.setSamplingInterval", { interval: 100 });
	await post("Profiler.start");
	return async () => {
		const { profile } = (await post("Profiler.stop")) as { profile: unknown };
		writeFileSync(file, JSON.stringify(profile));
		session.disconnect();
	};
}
