#!/usr/bin/env node
// The built CLI (npm ci runs the build through `prepare`).
import { runCli } from "../dist/cli/main.js";

process.exitCode = await runCli(process.argv.slice(2));
