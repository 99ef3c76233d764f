import { complete, type Api, type Model } from "@mariozechner/pi-ai";
import type { SummaryModel, SummaryReply } from "../../../services/history/summaries/summaryModel.ts";

/** Auth for one model, resolved while Pi's context was current (Pi's `getApiKeyAndHeaders`). */
export interface ModelAuth {
	readonly apiKey?: string;
	readonly headers?: Record<string, string>;
}

/** Tokens asked for a summary's answer (prompts ask for at most 250 words). */
const ANSWER_TOKENS = 1024;

/**
 * The summary model as pi-ai calls it: the model current in Pi, with Pi's auth. A call never
 * throws: pi-ai resolves an abort as `stopReason: "aborted"` and a failure as `"error"`; anything
 * thrown anyway becomes an error reply. The usage is not added to Pi's session.
 */
export function piSummaryModel(model: Model<Api>, auth: ModelAuth): SummaryModel {
	const maxOutputTokens = Math.min(ANSWER_TOKENS, model.maxTokens || ANSWER_TOKENS);
	return {
		id: `${model.provider}/${model.id}`,
		contextWindow: model.contextWindow || 8192,
		maxOutputTokens,
		async complete(request, signal): Promise<SummaryReply> {
			try {
				const reply = await complete(
					model,
					{ systemPrompt: request.system, messages: [{ role: "user", content: [{ type: "text", text: request.user }], timestamp: Date.now() }] },
					{
						...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}),
						...(auth.headers ? { headers: auth.headers } : {}),
						signal,
						maxTokens: maxOutputTokens,
					},
				);
				if (reply.stopReason === "aborted" || signal.aborted) return { kind: "aborted" };
				if (reply.stopReason === "error") return { kind: "error", error: reply.errorMessage ?? "the model returned an error" };
				const text = reply.content
					.map((block) => (block.type === "text" ? block.text : ""))
					.join("")
					.trim();
				if (text === "") return { kind: "error", error: "the model returned no text" };
				return { kind: "ok", text, usage: { input: reply.usage.input, output: reply.usage.output, totalTokens: reply.usage.totalTokens } };
			} catch (err) {
				if (signal.aborted) return { kind: "aborted" };
				return { kind: "error", error: (err as Error).message };
			}
		},
	};
}
