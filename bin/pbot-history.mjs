#!/usr/bin/env node
// The built CLI (npm ci builds it through `prepare`): a query from the code-cached script, any other
// command from the ES module bundle (`src/cli/queryScript.ts` says why).
import { cliFor } from "../dist/cli/queryScript.js";

const argv = process.argv.slice(2);
process.exitCode = await (await cliFor(argv))(argv);
