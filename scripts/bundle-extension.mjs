/**
 * Bundles the built Pi extension (`dist/integrations/pi/history/extension.js`) into
 * `dist/pi-extension/`, which the package's `pi.extensions` names: Pi loads an extension through
 * jiti, a file at a time, and from the TypeScript sources that took ≈ 170–270 ms of every Pi start
 * against ≈ 80–100 ms for the bundle (Pi's own `loadExtensions`, alternating runs on this machine).
 * Lazy imports stay chunks. Pi's packages stay outside, so the extension uses the instances Pi
 * itself loaded (its loader aliases them), and so do chokidar and ndjson, as in the module build.
 * immer and RxJS are inside (RxJS from its ES modules: `rxjsFromEsModules`).
 */
import { esmBundle } from "./esmBundle.mjs";

/** Bundled in: small, and loaded at every start. */
await esmBundle({ entry: { extension: "dist/integrations/pi/history/extension.js" }, outdir: "dist/pi-extension", inline: new Set(["immer", "rxjs"]) });
