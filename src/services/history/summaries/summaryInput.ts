import { createHash } from "../model/lazyCrypto.ts";
import type { SessionArchive, SummaryRecord } from "../projections/archive.ts";
import type { QaNode } from "../model/types.ts";
import { PROMPT_VERSION } from "./prompts.ts";

/** One unit of input: a Q&A or a child summary, as the model reads it. Segments split between units. */
export interface InputUnit {
	readonly id: string;
	readonly text: string;
}

/** What a summary is made from: level 1 reads its four Q&A, higher levels their four summaries' texts. */
export function summaryInputUnits(archive: SessionArchive, summary: SummaryRecord): InputUnit[] | undefined {
	const units: InputUnit[] = [];
	for (const childId of summary.childIds) {
		if (summary.level === 1) {
			const qa = archive.nodes[childId];
			if (!qa) return undefined;
			units.push({ id: childId, text: qaForModel(qa) });
		} else {
			const child = archive.summaries[childId];
			if (child?.status !== "ready" || child.text === undefined) return undefined;
			units.push({ id: childId, text: `[${child.startedAt.slice(0, 16).replace("T", " ")} – ${child.endedAt.slice(0, 16).replace("T", " ")}]\n${child.text}` });
		}
	}
	return units;
}

/** A Q&A as the summarizer reads it: inputs and replies, labelled, with interruptions said. */
export function qaForModel(qa: QaNode): string {
	const lines: string[] = [];
	let inputs = 0;
	for (const part of qa.parts) {
		if (part.kind === "input") {
			lines.push(`${inputs++ === 0 ? "Person" : "Person (added while the agent worked)"}: ${part.text}${part.images ? ` [${part.images} image(s)]` : ""}`);
		} else {
			const cut = part.stopReason === "stop" ? "" : ` (reply ${part.stopReason}${part.error ? `: ${part.error}` : ""})`;
			lines.push(`Agent${cut}: ${part.text}`);
		}
	}
	if (!qa.completed) lines.push("(This exchange was not finished.)");
	return lines.join("\n");
}

/** Hash of what a summary is made from (and how): equal hashes mean the same text would be asked for. */
export function inputHashOf(units: readonly InputUnit[]): string {
	const hash = createHash("sha256").update(PROMPT_VERSION);
	for (const unit of units) hash.update("\u0000").update(unit.text);
	return hash.digest("base64url").slice(0, 24);
}
