#!/usr/bin/env node
// The built CLI, bundled (npm ci runs the build through `prepare`; `scripts/bundle-cli.mjs` says why).
import { runCli } from "../dist/cli-bundle/main.js";

process.exitCode = await runCli(process.argv.slice(2));
