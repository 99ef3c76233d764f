import { createRequire } from "node:module";
import type { Observable } from "rxjs";

/**
 * RxJS's `Observable`, loaded when first asked for: discovery runs on every query, and a query that
 * finds every file unchanged should not pay for loading RxJS (≈ 110 ms in a new process here: Node
 * picks its CommonJS build, ≈ 250 files). `require` gives the same instance as the pipeline's
 * `import` in the module build. The bundles replace this module with a static import of the RxJS
 * they carry (`scripts/esmBundle.mjs`, `lazyRxjsBundled`): there RxJS costs ≈ 2.5 ms, and a
 * `require` would load a second RxJS, the CommonJS one, the first time a file is read.
 */
const lazyRequire = createRequire(import.meta.url);

export function observableClass(): typeof Observable {
	return (lazyRequire("rxjs") as typeof import("rxjs")).Observable;
}
