import { defaultIfEmpty, lastValueFrom } from "rxjs";
import type { HistoryEvent } from "../model/events.ts";
import type { SessionSource, SourceState } from "../service/ports.ts";
import { sessionPipeline } from "./sessionPipeline.ts";

/**
 * The history events of one session file: the replay pipeline over its bytes. Its own module so
 * that the service loads the pipeline (and RxJS) only when a file has to be read.
 */
export function replayEvents(
	source: SessionSource,
	onState?: (state: SourceState) => void,
	limits: { readonly maxLineBytes?: number } = {},
): Promise<HistoryEvent[]> {
	const options = { ...(source.fallbackSessionId ? { fallbackSessionId: source.fallbackSessionId } : {}), ...limits };
	return lastValueFrom(source.read(onState).pipe(sessionPipeline({ mode: "replay", ...options }), defaultIfEmpty([] as HistoryEvent[])));
}
