/**
 * A pbot process making a session's summaries: it claims them as a summary pass does, prints
 * `claimed`, and holds the claim until the file `<go>` appears; then releases it and prints `released`.
 *   node --import tsx summaryClaimChild.ts <workspace> <sessionId> <go>
 */
import { existsSync } from "node:fs";
import { workspaceSummaryClaims } from "../../../src/storage/history-files/index.ts";

const [workspace, sessionId, go] = process.argv.slice(2) as [string, string, string];
const release = await workspaceSummaryClaims(workspace).claim(sessionId);
if (!release) {
	process.stdout.write("taken\n");
	process.exit(1);
}
process.stdout.write("claimed\n");
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 10));
await release();
process.stdout.write("released\n");
