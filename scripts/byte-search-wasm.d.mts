/** Types of `byte-search-wasm.mjs` (the byte search's test imports it). */
export declare const watFile: string;
export declare const moduleFile: string;
export declare function compileByteSearch(): Promise<Buffer>;
export declare function byteSearchModuleSource(bytes: Buffer): string;
