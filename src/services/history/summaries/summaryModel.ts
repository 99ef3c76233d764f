import type { SummaryUsage } from "../model/events.ts";

/** One model call: a system prompt and one user message. */
export interface SummaryRequest {
	readonly system: string;
	readonly user: string;
}

/** What a call gave: text, an abort (nothing to store), or an error (recorded, retried later). */
export type SummaryReply =
	| { readonly kind: "ok"; readonly text: string; readonly usage?: SummaryUsage }
	| { readonly kind: "aborted" }
	| { readonly kind: "error"; readonly error: string };

/**
 * The model summaries are made with, as the worker sees it. The Pi integration implements it with
 * `@mariozechner/pi-ai` and the model current in Pi; it never throws: failures are replies.
 */
export interface SummaryModel {
	/** `provider/modelId`, stored with every summary it makes. */
	readonly id: string;
	/** Tokens the model takes in one call (prompt and answer together). */
	readonly contextWindow: number;
	/** Tokens reserved for the answer. */
	readonly maxOutputTokens: number;
	complete(request: SummaryRequest, signal: AbortSignal): Promise<SummaryReply>;
}
