import { piRun } from "./tasks/pi.ts";
const P = "/work/main/bench/data/large-20260301/work/pi";
const r = await piRun({ workspace: P + "/workspace", agentDir: P + "/agent", sessionDir: P + "/sessions", queries: ["connection pool", "error", "redis", "config", "timeout"], withExtension: true, reads: 3 });
console.log(JSON.stringify({ first: r.firstQueryMs, later: r.laterMs, start: r.piStartMs, errors: r.errors }));
process.exit(0);
