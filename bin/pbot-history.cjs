#!/usr/bin/env node
// The built CLI (npm ci builds it through `prepare`): a query, `ingest` or `rebuild` from the code-cached script, any other
// command from the ES module bundle (`src/cli/launch.ts` says why). CommonJS, and so is the
// launcher it loads: a query process never sets up Node's ES module loader (≈ 10–15 ms).
"use strict";
require("../dist/cli-bundle/launch.cjs").runBin(process.argv.slice(2));
