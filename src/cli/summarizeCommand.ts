import { existsSync, readFileSync, statSync } from "node:fs";
import { wrapText } from "./format.ts";
import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import { AuthStorage, type AuthStorageBackend, FileAuthStorageBackend, getAgentDir, ModelRegistry, SettingsManager } from "@mariozechner/pi-coding-agent";
import type { HistoryService } from "../services/history/service/historyService.ts";
import { describeBacklog, splitBacklog } from "../services/history/summaries/backfill.ts";
import { MAX_ATTEMPTS_PER_SUMMARY, runSummaryPass, type SummaryPassReport } from "../services/history/summaries/summaryWorker.ts";
import { piSummaryModel } from "../integrations/pi/history/piSummaryModel.ts";

export interface SummarizeOptions {
	readonly workspace: string;
	/** Pi's agent directory as the person named it (`--agent-dir`, absolute): it must exist. Default: Pi's own. */
	readonly agentDir?: string;
	/** `provider/modelId`; default: Pi's default model from its settings. */
	readonly model?: string;
	/** Progress as it goes ("pbot: summaries 3/10"). */
	readonly onProgress?: (done: number, total: number) => void;
	/** A model error the run has not seen before, when it happens (the person need not wait for the end to learn the key is wrong). */
	readonly onNewError?: (error: string) => void;
	/** Before the first call: what is due and roughly what it sends ("12 summaries of earlier work in 3 sessions (about 40k input tokens)"), and the model. */
	readonly onPlan?: (plan: string, model: string) => void;
	readonly signal: AbortSignal;
}

/** A mistake the person can fix (no model, unknown model, no key, no agent dir): the CLI exits 2. */
export class SummarizeSetupError extends Error {
	override readonly name = "SummarizeSetupError";
}

export type SummarizeReport = SummaryPassReport & { readonly model: string };

/**
 * `pbot-history summarize`: the same worker Pi runs when idle, run from the command line with Pi's
 * stored auth (`auth.json`, `models.json` and settings in Pi's agent directory). Those are only
 * read: nothing is made in the agent directory (Pi's own `AuthStorage.create` makes the folder
 * and an empty `auth.json` at its first read), and everything the person can get wrong — the
 * model's spelling, the agent directory, the model, its key — is checked before any call.
 */
export async function summarizeWorkspace(service: HistoryService, options: SummarizeOptions): Promise<SummarizeReport> {
	const spec = options.model === undefined ? undefined : parseModelSpec(options.model);
	const agentDir = options.agentDir ?? getAgentDir();
	if (options.agentDir !== undefined) checkAgentDir(options.agentDir);
	const authStorage = AuthStorage.fromStorage(new ReadOnlyAuthFile(join(agentDir, "auth.json")));
	const registry = ModelRegistry.create(authStorage, join(agentDir, "models.json"));
	const model = pickModel(registry, spec ?? defaultModel(options.workspace, agentDir));
	// What Pi's own prompt checks: a stored key or login, the provider's environment variable, or a key in models.json.
	if (!registry.hasConfiguredAuth(model)) throw new SummarizeSetupError(noKeyMessage(model, agentDir, authStorage.drainErrors()));
	const auth = await registry.getApiKeyAndHeaders(model);
	if (!auth.ok) throw new SummarizeSetupError(`no auth for ${model.provider}/${model.id}: ${auth.error}`);
	await service.ingest();
	const due = await service.summaryBacklog();
	const backlog = splitBacklog(due, undefined);
	if (backlog.pastCalls > 0) options.onPlan?.(describeBacklog(backlog), `${model.provider}/${model.id}`);
	await service.loadSessions(due.keys());
	const seen = new Set<string>();
	const report = await runSummaryPass(
		service.summaryTarget(),
		piSummaryModel(model, { ...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}), ...(auth.headers ? { headers: auth.headers } : {}) }),
		options.signal,
		{
			...(options.onProgress ? { onProgress: options.onProgress } : {}),
			onFailure: (error: string) => {
				if (seen.has(error)) return;
				seen.add(error);
				options.onNewError?.(error);
			},
		},
	);
	return { ...report, model: `${model.provider}/${model.id}` };
}

/**
 * The report's line on stdout: what was made, what failed (attempts, and on how many summaries),
 * what is left; wrapped at the terminal's width (`columns`) when there is one.
 */
export function summarizeReportText(report: SummarizeReport, columns?: number): string {
	return wrapText(reportLine(report), columns);
}

function reportLine(report: SummarizeReport): string {
	const head = report.aborted
		? "Stopped: the summary in flight stays pending."
		: report.gaveUp
			? `Stopped after ${report.failed} attempts failed alike: the rest would too (fix the cause above and run again).`
			: "Done.";
	const failed =
		report.failed === 0
			? "0 failed"
			: `${report.failed} failed attempt(s)${
					report.failedSummaries > 0
						? `: ${report.failedSummaries} summary(ies) still failing (each is tried up to ${MAX_ATTEMPTS_PER_SUMMARY} times in a run, then left for the next)`
						: " (made on a retry)"
				}`;
	const others = report.leftToOthers > 0 ? ` ${report.leftToOthers} of them are in sessions another pbot process is summarizing now: left to it.` : "";
	return `${head} ${report.made} summary(ies) made with ${report.model}, ${failed}, ${report.remaining} still due (${report.calls} model call(s)).${others}`;
}

/** Error lines shown at most (the JSON report has every one). */
const ERRORS_SHOWN = 3;

/** Why attempts failed, for stderr: the errors, the first failure's first, each with how many attempts gave it. */
export function summarizeFailureLines(report: SummarizeReport): string[] {
	const lines = report.errors.slice(0, ERRORS_SHOWN).map((e) => `pbot: model error: ${e.message} (${e.count} of ${report.failed} failed attempt(s))`);
	const more = report.errors.length - ERRORS_SHOWN;
	if (more > 0) lines.push(`pbot: and ${more} other error(s) (--json lists them all)`);
	return lines;
}

/** When the run made nothing and every attempt failed (the CLI then exits 1): what to say; otherwise undefined. */
export function summarizeFailure(report: SummarizeReport): string | undefined {
	if (report.aborted || report.made > 0 || report.failed === 0) return undefined;
	return `no summary made: all ${report.failed} attempt(s) with ${report.model} failed (${report.errors[0]?.message ?? "see above"})`;
}

/** `provider/id`, checked before anything is read. */
function parseModelSpec(spec: string): { provider: string; id: string } {
	const slash = spec.indexOf("/");
	if (slash <= 0 || slash === spec.length - 1) throw new SummarizeSetupError(`--model: expected provider/id, got ${JSON.stringify(spec)}`);
	return { provider: spec.slice(0, slash), id: spec.slice(slash + 1) };
}

/** A named agent directory must be a folder: a typo is said, not made (nor read as "no key"). */
function checkAgentDir(dir: string): void {
	const stat = statSync(dir, { throwIfNoEntry: false });
	if (!stat) throw new SummarizeSetupError(`--agent-dir: ${dir} does not exist (Pi's agent directory holds its auth.json, models.json and settings.json)`);
	if (!stat.isDirectory()) throw new SummarizeSetupError(`--agent-dir: ${dir} is not a folder`);
}

/** Pi's default model from its settings (the agent directory's, then the workspace's `.pi/settings.json`), read only. */
function defaultModel(workspace: string, agentDir: string): { provider: string; id: string } {
	const settings = SettingsManager.fromStorage(readOnlySettings(workspace, agentDir));
	const provider = settings.getDefaultProvider();
	const id = settings.getDefaultModel();
	if (!provider || !id) throw new SummarizeSetupError("no model: pass --model provider/id (Pi's settings name no default model)");
	return { provider, id };
}

function pickModel(registry: ModelRegistry, spec: { provider: string; id: string }): Model<Api> {
	const found = registry.find(spec.provider, spec.id);
	if (found) return found;
	const modelsError = registry.getError();
	throw new SummarizeSetupError(
		`--model: Pi knows no model ${JSON.stringify(`${spec.provider}/${spec.id}`)} (see \`pi --list-models\`)${modelsError ? `; ${modelsError}` : ""}`,
	);
}

function noKeyMessage(model: Model<Api>, agentDir: string, authErrors: readonly Error[]): string {
	const p = model.provider;
	const unreadable = authErrors.length > 0 ? ` (${join(agentDir, "auth.json")} could not be read: ${authErrors[0]?.message})` : "";
	return (
		`no API key for provider ${JSON.stringify(p)} (model ${p}/${model.id})${unreadable}: set the provider's API key variable ` +
		`(\`pi --help\` lists them), log in with Pi (\`pi\`, then /login; it keeps the key in ${join(agentDir, "auth.json")}), ` +
		`or give the provider an "apiKey" in ${join(agentDir, "models.json")}`
	);
}

/** The file's text, or undefined when there is none. */
function readIfExists(path: string): string | undefined {
	try {
		return readFileSync(path, "utf8");
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw err;
	}
}

/**
 * Pi's `auth.json`, read as Pi's `FileAuthStorageBackend` reads it but never made, and never
 * locked to be read (a lock is a file next to it). What `AuthStorage` would store (a login, a
 * logout: never asked for here) is dropped. The one exception is the refresh of an expired OAuth
 * login (`withLockAsync`, used for nothing else): it is left to Pi's own backend, which renews the
 * token under Pi's lock in the existing file, as every Pi process does, because a provider that
 * rotates refresh tokens would log Pi out if the renewed token were kept only in this process.
 */
class ReadOnlyAuthFile implements AuthStorageBackend {
	constructor(private readonly path: string) {}

	withLock<T>(fn: (current: string | undefined) => { result: T; next?: string }): T {
		return fn(readIfExists(this.path)).result;
	}

	async withLockAsync<T>(fn: (current: string | undefined) => Promise<{ result: T; next?: string }>): Promise<T> {
		if (!existsSync(this.path)) return (await fn(undefined)).result;
		return new FileAuthStorageBackend(this.path).withLockAsync(fn);
	}
}

type SettingsStorage = Parameters<typeof SettingsManager.fromStorage>[0];

/**
 * Pi's settings (global in the agent directory, the project's in `<workspace>/.pi/`), read without
 * Pi's lock (its `FileSettingsStorage` locks an existing file to read it, making a lock folder
 * next to it) and never written.
 */
function readOnlySettings(workspace: string, agentDir: string): SettingsStorage {
	return {
		withLock: (scope, fn) => void fn(readIfExists(scope === "global" ? join(agentDir, "settings.json") : join(workspace, ".pi", "settings.json"))),
	};
}
