/**
 * The package as a library, as another project imports it: by name, through its `exports` map, from
 * the build (`npm test` builds first). The README's example, end to end, in a process of its own.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { fixtureWorkspace } from "./query/helpers.ts";
import { foldersRemovedAfter } from "./helpers/cleanups.ts";

const exec = promisify(execFile);
const cleanups = foldersRemovedAfter("all");

describe('import { openWorkspaceHistory } from "pbot-history"', () => {
	it("opens a workspace's history and answers search, sessions and read; deep imports are closed", async () => {
		const ws = await fixtureWorkspace(["tools-thinking", "many-qa-72"]);
		cleanups.push(ws.workspace);
		const script = `
			import { openWorkspaceHistory, isQueryError } from "pbot-history";
			const history = openWorkspaceHistory({ workspace: ${JSON.stringify(ws.workspace)}, sessionDirs: [${JSON.stringify(ws.sessions)}], agentDir: ${JSON.stringify(ws.agentDir)} });
			const sessions = await history.sessions();
			const hits = await history.search({ query: "the", limit: 1 });
			const node = await history.read({ id: hits.groups[0].hits[0].id });
			let bad = "";
			try { await history.search({ query: "x", from: "yesterday" }); } catch (err) { bad = isQueryError(err) ? "query error" : String(err); }
			let deep = "";
			try { await import("pbot-history/dist/cli/main.js"); } catch (err) { deep = err.code; }
			console.log(JSON.stringify({ sessions: sessions.total, hit: hits.total > 0, read: node.id === hits.groups[0].hits[0].id, bad, deep }));
		`;
		const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd() });
		expect(JSON.parse(stdout)).toEqual({ sessions: 2, hit: true, read: true, bad: "query error", deep: "ERR_PACKAGE_PATH_NOT_EXPORTED" });
	});

	it("says what is wrong with what it is given: an empty or file workspace, a named session folder that is not there", async () => {
		const ws = await fixtureWorkspace(["tools-thinking"]);
		cleanups.push(ws.workspace);
		const script = `
			import { openWorkspaceHistory } from "pbot-history";
			import { writeFileSync } from "node:fs";
			const out = {};
			const attempt = async (name, options) => {
				try { await openWorkspaceHistory({ agentDir: ${JSON.stringify(ws.agentDir)}, ...options }).sessions(); out[name] = "answered"; }
				catch (err) { out[name] = err.name + ": " + err.message; }
			};
			await attempt("empty", { workspace: "" });
			writeFileSync(${JSON.stringify(`${ws.workspace}/a-file`)}, "x");
			await attempt("file", { workspace: ${JSON.stringify(`${ws.workspace}/a-file`)} });
			const history = openWorkspaceHistory({ workspace: ${JSON.stringify(ws.workspace)}, sessionDirs: ["no-such-folder", ${JSON.stringify(ws.sessions)}] /* relative: from the workspace */, agentDir: ${JSON.stringify(ws.agentDir)} });
			out.sessions = (await history.sessions()).total;
			out.warnings = history.takeWarnings();
			console.log(JSON.stringify(out));
		`;
		const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd() });
		const out = JSON.parse(stdout);
		expect(out.empty).toBe('TypeError: openWorkspaceHistory: workspace must name the workspace\'s folder, not ""');
		expect(out.file).toBe(
			`UnsafePbotFolderError: ${ws.workspace}/a-file is not an existing folder: pbot makes its .pi/pbot inside a workspace, never the workspace itself`,
		);
		expect(out.sessions).toBe(1);
		expect(out.warnings).toEqual([`session folder ${ws.workspace}/no-such-folder does not exist: no session read from it`]);
	});
});
