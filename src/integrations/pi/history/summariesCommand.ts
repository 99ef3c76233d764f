import { type Backlog, describeBacklog, splitBacklog } from "../../../services/history/summaries/backfill.ts";
import type { PiSessionFacts } from "./piSession.ts";
import type { HistoryRuntime } from "./runtime.ts";

const USAGE = "Usage: /pbot summaries [on|off|threshold <calls>]";

/** What `/pbot summaries` says, and how loudly. */
export interface SummariesAnswer {
	readonly text: string;
	readonly level: "info" | "warning";
}

/**
 * `/pbot summaries`: the backlog (this session's new work, and the earlier work — past sessions' and
 * what was due in this one when it started — with an estimate of the input tokens) and whether
 * earlier work is summarized; `on`/`off` answers that for the
 * workspace, `threshold <calls>` sets the backlog above which the person is asked first.
 */
export async function summariesCommand(args: readonly string[], facts: PiSessionFacts, runtime: HistoryRuntime): Promise<SummariesAnswer> {
	const settings = runtime.settingsFor(facts);
	const [verb, value, ...extra] = args;
	if (verb === "on" || verb === "off") {
		if (value !== undefined) return { text: USAGE, level: "warning" };
		await settings.save({ backfill: verb });
		const now =
			verb === "on"
				? "the earlier work's summaries are made after the next turn ends (new input pauses them)"
				: "only the current session's new summaries are made; the earlier work waits";
		return { text: `pbot summaries: ${verb} for this workspace: ${now}.`, level: "info" };
	}
	if (verb === "threshold") {
		const calls = value !== undefined && /^\d{1,7}$/.test(value) ? Number(value) : undefined;
		if (calls === undefined || extra.length > 0) return { text: `pbot summaries: the threshold is a number of calls (0 or more). ${USAGE}`, level: "warning" };
		await settings.save({ threshold: calls });
		return { text: `pbot summaries: a backlog of earlier work above ${calls} call(s) is asked about first.`, level: "info" };
	}
	if (verb !== undefined) return { text: USAGE, level: "warning" };

	await runtime.settled();
	const service = runtime.serviceFor(facts);
	const due = await service.summaryBacklog();
	const earlier = await runtime.earlierWork(facts, due);
	const backlog = splitBacklog(due, facts.sessionId, earlier.size);
	const stored = await settings.load();
	return { text: statusText(backlog, stored.backfill, stored.threshold), level: "info" };
}

function statusText(backlog: Backlog, backfill: "on" | "off" | undefined, threshold: number): string {
	const current = `This session's new work: ${backlog.currentCalls} ${backlog.currentCalls === 1 ? "summary" : "summaries"} due (always made).`;
	const past = backlog.pastCalls === 0 ? "Earlier work: nothing due." : `Earlier work: ${describeBacklog(backlog)} due.`;
	const policy =
		backfill === "on"
			? "Earlier work is summarized (on). /pbot summaries off stops it."
			: backfill === "off"
				? "Earlier work is not summarized (off). /pbot summaries on starts it."
				: `No answer yet: a backlog above ${threshold} call(s) is asked about before it starts (once per Pi start until answered; "Not now" waits for the next). /pbot summaries on|off answers now; /pbot summaries threshold <calls> sets it.`;
	return ["pbot summaries", current, past, policy].join("\n");
}
