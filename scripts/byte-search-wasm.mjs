/**
 * The byte search's WebAssembly (`src/services/history/model/byteSearch.wat`) compiled
 * with wabt, and the module that carries its bytes (`byteSearchModule.ts`), so that nothing at run
 * time needs wabt. `node scripts/byte-search-wasm.mjs` writes the module; the byte search's test
 * compiles the text again and checks that the module still holds the same bytes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import wabt from "wabt";

const folder = join(fileURLToPath(new URL("..", import.meta.url)), "src", "services", "history", "model");
export const watFile = join(folder, "byteSearch.wat");
export const moduleFile = join(folder, "byteSearchModule.ts");

/** The `.wat` compiled to WebAssembly's binary form. */
export async function compileByteSearch() {
	const tools = await wabt();
	const parsed = tools.parseWat("byteSearch.wat", readFileSync(watFile, "utf8"), { simd: true });
	try {
		parsed.validate();
		return Buffer.from(parsed.toBinary({ write_debug_names: false }).buffer);
	} finally {
		parsed.destroy();
	}
}

/** The TypeScript module that carries `bytes` (as Biome formats it). */
export function byteSearchModuleSource(bytes) {
	return `// Written by \`node scripts/byte-search-wasm.mjs\` from byteSearch.wat: do not edit.
/** The byte search's WebAssembly module (${bytes.length} bytes), base64. */
export const BYTE_SEARCH_WASM =
	"${bytes.toString("base64")}";
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	writeFileSync(moduleFile, byteSearchModuleSource(await compileByteSearch()));
	console.log(`wrote ${moduleFile}`);
}
