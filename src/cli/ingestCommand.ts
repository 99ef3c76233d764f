import type { IngestReport } from "../services/history/service/historyService.ts";
import { historyDir } from "../storage/history-files/index.ts";
import { emptyHistoryNote } from "./emptyHistory.ts";
import { type Column, columnsTable, fittingLayout, wrapText } from "./format.ts";
import { workspaceOf, type WorkspaceOptions } from "./workspaceOptions.ts";
import { openFromOptions } from "./workspaceService.ts";

export interface IngestCommandOptions extends WorkspaceOptions {
	readonly json?: boolean;
}

/**
 * `pbot-history ingest` (`refresh`: files unchanged since they were ingested are not read) and
 * `pbot-history rebuild` (`ingest`: every file read again); prints the report. `signal` (Ctrl+C)
 * stops it after the file being read, with what was read stored as in a whole run; says whether
 * it was stopped so (the caller exits 130).
 */
export async function runIngestCommand(
	mode: "refresh" | "ingest",
	opts: IngestCommandOptions,
	io: {
		readonly stdout: (text: string) => void;
		readonly stderr?: (text: string) => void;
		readonly cwd: string;
		readonly columns?: number | undefined;
		/** A line of progress on a terminal (`CliIo.status`). */
		readonly status?: ((text: string | undefined) => void) | undefined;
	},
	signal?: AbortSignal,
): Promise<boolean> {
	const service = openFromOptions(opts, io.cwd, io.stderr, io.status);
	// `rebuild` makes the search text again too (`HistoryService.rebuild`).
	const report = await (mode === "refresh"
		? service.refresh({ checkArchives: true, ...(signal ? { signal } : {}) })
		: service.rebuild(signal ? { signal } : {}));
	printIngestReport(opts, report, io, mode === "ingest" ? "rebuild" : "ingest");
	if (report.stopped !== undefined) {
		if (!opts.json)
			io.stdout(
				wrapText(
					`\nStopped: ${report.stopped} file(s) not read yet. What was read is archived and kept; ${mode === "refresh" ? "`pbot-history ingest` again reads the rest (a query does too)." : "`pbot-history rebuild` again reads every file again."}`,
					io.columns,
				),
			);
		return true;
	}
	if (!opts.json && report.sessions.length === 0 && report.unchangedFiles === 0) {
		const note = await emptyHistoryNote(opts, io.cwd);
		if (note !== "") io.stdout(wrapText(note.slice(1), io.columns));
	}
	const failed = ingestTotals(report).failed;
	if (failed > 0) throw new Error(`${failed} archive write(s) failed (see the warnings): those sessions are not stored`);
	return false;
}

/** The report as JSON (`--json`) or as a table (`command`: which one ran, for its first line). */
export function printIngestReport(
	opts: IngestCommandOptions,
	report: IngestReport,
	io: { readonly stdout: (text: string) => void; readonly cwd: string; readonly columns?: number | undefined },
	command: "ingest" | "rebuild" = "ingest",
): void {
	if (opts.json) io.stdout(JSON.stringify({ totals: ingestTotals(report), ...report }, null, 2));
	else io.stdout(formatIngestReport(report, historyDir(workspaceOf(opts, io.cwd)), io.columns, command));
}

/** The totals a person wants first: how much was found. */
export function ingestTotals(report: IngestReport) {
	const levels: number[] = [];
	for (const s of report.sessions)
		s.plannedByLevel.forEach((n, i) => {
			levels[i] = (levels[i] ?? 0) + n;
		});
	return {
		sessions: report.sessions.length,
		qa: sum(report.sessions.map((s) => s.qa)),
		incomplete: sum(report.sessions.map((s) => s.incomplete)),
		branches: sum(report.sessions.map((s) => s.branches)),
		plannedByLevel: Array.from(levels, (n) => n ?? 0),
		rejectedLines: sum(report.sessions.map((s) => s.rejectedLines)),
		written: report.sessions.filter((s) => s.written).length,
		failed: report.sessions.filter((s) => s.failed === true).length,
	};
}

/**
 * The report as a table. With `columns` (the terminal's width) every line fits in it: the session
 * ids stay whole, the other columns get shorter headings, then the least wanted go.
 */
export function formatIngestReport(report: IngestReport, archiveDir: string, columns?: number, command: "ingest" | "rebuild" = "ingest"): string {
	const totals = ingestTotals(report);
	const levelsText = (levels: readonly number[]) => (levels.length === 0 ? "-" : levels.join("/"));
	const rows = report.sessions.map((s) => [s.sessionId, s.qa, s.incomplete, s.branches, levelsText(s.plannedByLevel), s.rejectedLines]);
	rows.push(["total", totals.qa, totals.incomplete, totals.branches, levelsText(totals.plannedByLevel), totals.rejectedLines]);
	const column = (header: string, at: number): Column => ({ header, cells: rows.map((r) => r[at] as string | number) });
	const full = ["session", "Q&A", "incomplete", "branches", "planned L1/L2/…", "rejected lines"].map(column);
	const short = ["session", "Q&A", "open", "br", "planned", "rejected"].map(column);
	const [session, qa, open, br] = short as [Column, Column, Column, Column];
	const layouts = [full, short, [session, qa, open, br], [session, qa], [session]];
	const fitted = (line: string, continuation?: string) => wrapText(line, columns, continuation);
	const layout = columns === undefined ? full : (layouts[fittingLayout(layouts, columns)] as Column[]);
	const lines = [
		fitted(
			command === "rebuild"
				? `Rebuilt: read ${totals.sessions} session(s) again into ${archiveDir} (${totals.written} archive(s) changed${totals.failed > 0 ? `, ${totals.failed} FAILED` : ""}) and made the search text again.`
				: `Ingested ${totals.sessions} session(s) into ${archiveDir} (${totals.written} archive(s) written${totals.failed > 0 ? `, ${totals.failed} FAILED` : ""}${report.unchangedFiles > 0 ? `; ${report.unchangedFiles} file(s) unchanged since they were ingested, not read` : ""}).`,
		),
		"",
		columnsTable(layout, columns),
	];
	// A narrow terminal drops columns: their totals are still said (rejected lines are what a
	// person must not miss), under the table.
	const left = full.filter((c, i) => i > 0 && !layout.includes(c) && !layout.includes(short[i] as Column));
	if (left.length > 0)
		lines.push(
			fitted(`Not shown at this width (totals): ${left.map((c) => `${c.header} ${c.cells[c.cells.length - 1]}`).join(", ")}; --json has every column.`),
		);
	if (report.warnings.length > 0) lines.push("", "Warnings:", ...report.warnings.map((w) => fitted(`  ${w}`, "    ")));
	return lines.join("\n");
}

function sum(values: readonly number[]): number {
	return values.reduce((a, b) => a + b, 0);
}
