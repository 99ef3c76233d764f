/**
 * Live tail latency: Q&A appended to a running session file, line by line with `appendFileSync`
 * as Pi writes them, followed by the real tail (`tailSessionFile`: chokidar, appended bytes, the
 * live pipeline) feeding the service (`applyEvents`), as the Pi runtime wires it. Measured from
 * the append of the final answer's line to the moment a search for a word only that answer holds
 * finds it — and, as context, to the moment its archive is written. Searches go through the
 * service (`search`, what the tool calls); after the first ingest its discovery finds no file, so
 * a search's refresh reads nothing and what it finds came through the tail.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { tailSessionFile } from "../../src/integrations/pi/history/tailSessionFile.ts";
import { peakRss, workspaceService } from "./wiring.ts";

export interface LiveResult {
	readonly fileBytes: number;
	readonly appends: number;
	/** Append of the answer → searchable (ms), per append; -1: not found within the timeout. */
	readonly searchableMs: readonly number[];
	/** Append of the answer → its archive written (ms). */
	readonly writtenMs: readonly number[];
	readonly peakRss: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `startBytes` of an existing session (cut at a line end) become the live file; then `appends` Q&A are added. */
export async function liveTail(sourceFile: string, startBytes: number, workspace: string, appends: number): Promise<LiveResult> {
	rmSync(workspace, { recursive: true, force: true });
	const sessions = join(workspace, "sessions");
	mkdirSync(sessions, { recursive: true });
	const file = join(sessions, basename(sourceFile));
	const all = readFileSync(sourceFile);
	let cut = Math.min(all.length, startBytes);
	while (cut < all.length && all[cut - 1] !== 0x0a) cut++;
	writeFileSync(file, all.subarray(0, cut));
	const lastLine = all.subarray(0, cut).toString("utf8").trimEnd().split("\n").pop() ?? "";
	let parentId = (JSON.parse(lastLine) as { id?: string }).id ?? null;

	let tailing = false;
	const { service } = workspaceService(workspace, sessions, { quiet: () => tailing });
	await service.ingest();
	tailing = true;
	const found = async (token: string) => {
		const r = await service.search({ query: token });
		return r.kind === "hits" && r.total > 0;
	};
	await found("warm-up");

	let waiting: { token: string; at: number; searchable?: number; written?: number; done: () => void } | undefined;
	const check = async () => {
		const w = waiting;
		if (w && w.searchable === undefined && (await found(w.token)) && w.searchable === undefined) w.searchable = performance.now() - w.at;
	};
	const subscription = tailSessionFile(file).subscribe({
		next: (events) => {
			const applied = service.applyEvents(events);
			// The state changes before the write is awaited: look as soon as the microtasks ran.
			setImmediate(() => void check());
			void applied.then(async () => {
				const w = waiting;
				await check();
				if (w && w.searchable !== undefined && w.written === undefined) {
					w.written = performance.now() - w.at;
					w.done();
				}
			});
		},
	});
	await sleep(500);

	const searchableMs: number[] = [];
	const writtenMs: number[] = [];
	let clock = Date.UTC(2026, 5, 1, 9);
	let n = 0;
	const entry = (message: Record<string, unknown>) => {
		const id = `live${String(n++).padStart(4, "0")}`;
		clock += 1_500;
		const line = JSON.stringify({ type: "message", id, parentId, timestamp: new Date(clock).toISOString(), message: { ...message, timestamp: clock } });
		parentId = id;
		return line;
	};
	for (let k = 0; k < appends; k++) {
		const token = `livetoken${k}x${(k * 7919) % 1000}`;
		appendFileSync(file, `${entry({ role: "user", content: [{ type: "text", text: `Live question ${k}: what changed in the build?` }] })}\n`);
		appendFileSync(
			file,
			`${entry({
				role: "assistant",
				content: [
					{ type: "thinking", thinking: "Check the log.", thinkingSignature: "QUJD" },
					{ type: "toolCall", id: `call_${k}`, name: "bash", arguments: { command: "npm test" } },
				],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				usage: { input: 10, output: 10 },
				stopReason: "toolUse",
			})}\n`,
		);
		appendFileSync(
			file,
			`${entry({ role: "toolResult", toolCallId: `call_${k}`, toolName: "bash", content: [{ type: "text", text: "ok\n".repeat(200) }], isError: false })}\n`,
		);
		await sleep(150);
		const done = new Promise<void>((resolve) => {
			waiting = { token, at: performance.now(), done: resolve };
		});
		appendFileSync(
			file,
			`${entry({ role: "assistant", content: [{ type: "text", text: `The build changed: ${token} is the answer.` }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: { input: 10, output: 10 }, stopReason: "stop" })}\n`,
		);
		const timeout = sleep(5_000).then(() => "timeout");
		await Promise.race([done, timeout]);
		const w = waiting as unknown as { searchable?: number; written?: number };
		searchableMs.push(w.searchable ?? -1);
		writtenMs.push(w.written ?? -1);
		waiting = undefined;
		await sleep(120);
	}
	subscription.unsubscribe();
	await sleep(50);
	return { fileBytes: cut, appends, searchableMs, writtenMs, peakRss: peakRss() };
}
