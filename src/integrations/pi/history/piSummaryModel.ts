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
 * thrown anyway becomes an error reply. The usage is not added to Pi's session. Nothing is written
 * on disk here: pi-ai's `complete` writes no file, and the auth was resolved before (inside Pi by
 * Pi's own `ctx.modelRegistry`, from the CLI read-only: see `cli/summarizeCommand.ts`).
 */
export function piSummaryModel(model: Model<Api>, auth: ModelAuth): SummaryModel {
	const maxOutputTokens = Math.min(ANSWER_TOKENS, model.maxTokens || ANSWER_TOKENS);
	return {
		id: `${model.provider}/${model.id}`,
		contextWindow: model.contextWindow || 8192,
		maxOutputTokens,
		async complete(request, signal): Promise<SummaryReply> {
			// Each call gets its own signal, tied to the pass's for the call's length: a provider's SDK
			// may leave its abort listener behind (Anthropic's does on a failed call, three per call with
			// its retries), and on the pass's one signal those add up to Node's MaxListenersExceededWarning
			// on stderr after four calls, and to a leak over a long pass.
			const call = new AbortController();
			const stop = () => call.abort(signal.reason);
			if (signal.aborted) call.abort(signal.reason);
			else signal.addEventListener("abort", stop, { once: true });
			try {
				const reply = await complete(
					model,
					{ systemPrompt: request.system, messages: [{ role: "user", content: [{ type: "text", text: request.user }], timestamp: Date.now() }] },
					{
						...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}),
						...(auth.headers ? { headers: auth.headers } : {}),
						signal: call.signal,
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
			} finally {
				signal.removeEventListener("abort", stop);
			}
		},
	};
}
