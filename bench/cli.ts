/**
 * `bin/pbot-history.cjs` for the bench's `tsx` runtime (the smoke tests): the same entry, on the
 * sources instead of the build. `npm run bench` runs the built bin itself.
 */
import { runCli } from "../src/cli/main.ts";

process.exitCode = await runCli(process.argv.slice(2));
