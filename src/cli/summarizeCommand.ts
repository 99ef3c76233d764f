import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import { AuthStorage, getAgentDir, ModelRegistry, SettingsManager } from "@mariozechner/pi-coding-agent";
import type { HistoryService } from "../services/history/service/historyService.ts";
import { describeBacklog, splitBacklog } from "../services/history/summaries/backfill.ts";
import { runSummaryPass, type SummaryPassReport } from "../services/history/summaries/summaryWorker.ts";
import { piSummaryModel } from "../integrations/pi/history/piSummaryModel.ts";

export interface SummarizeOptions {
	readonly workspace: string;
	readonly agentDir?: string;
	/** `provider/modelId`; default: Pi's default model from its settings. */
	readonly model?: string;
	/** Progress as it goes ("pbot: summaries 3/10"). */
	readonly onProgress?: (done: number, total: number) => void;
	/** Before the first call: what is due and roughly what it sends ("12 summaries of earlier work in 3 sessions (about 40k input tokens)"), and the model. */
	readonly onPlan?: (plan: string, model: string) => void;
	readonly signal: AbortSignal;
}

/** A mistake the person can fix (no model, unknown model, no key): the CLI exits 2. */
export class SummarizeSetupError extends Error {
	override readonly name = "SummarizeSetupError";
}

/**
 * `pbot-history summarize`: the same worker Pi runs when idle, run from the command line with Pi's
 * stored auth (`auth.json`, `models.json` and settings in Pi's agent directory).
 */
export async function summarizeWorkspace(service: HistoryService, options: SummarizeOptions): Promise<SummaryPassReport & { model: string }> {
	const agentDir = options.agentDir ?? getAgentDir();
	const authStorage = AuthStorage.create(join(agentDir, "auth.json"));
	const registry = ModelRegistry.create(authStorage, join(agentDir, "models.json"));
	const model = pickModel(registry, options, agentDir);
	const auth = await registry.getApiKeyAndHeaders(model);
	if (!auth.ok) throw new SummarizeSetupError(`no auth for ${model.provider}/${model.id}: ${auth.error}`);
	await service.ingest();
	const due = await service.summaryBacklog();
	const backlog = splitBacklog(due, undefined);
	if (backlog.pastCalls > 0) options.onPlan?.(describeBacklog(backlog), `${model.provider}/${model.id}`);
	await service.loadSessions(due.keys());
	const report = await runSummaryPass(
		service.summaryTarget(),
		piSummaryModel(model, { ...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}), ...(auth.headers ? { headers: auth.headers } : {}) }),
		options.signal,
		options.onProgress ? { onProgress: options.onProgress } : {},
	);
	return { ...report, model: `${model.provider}/${model.id}` };
}

function pickModel(registry: ModelRegistry, options: SummarizeOptions, agentDir: string): Model<Api> {
	let spec = options.model;
	if (!spec) {
		const settings = SettingsManager.create(options.workspace, agentDir);
		const provider = settings.getDefaultProvider();
		const id = settings.getDefaultModel();
		if (!provider || !id) throw new SummarizeSetupError("no model: pass --model provider/id (Pi's settings name no default model)");
		spec = `${provider}/${id}`;
	}
	const slash = spec.indexOf("/");
	if (slash <= 0 || slash === spec.length - 1) throw new SummarizeSetupError(`--model: expected provider/id, got ${JSON.stringify(spec)}`);
	const found = registry.find(spec.slice(0, slash), spec.slice(slash + 1));
	if (!found) throw new SummarizeSetupError(`--model: Pi knows no model ${JSON.stringify(spec)} (see \`pi --list-models\`)`);
	return found;
}
