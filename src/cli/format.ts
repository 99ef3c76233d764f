/** Small helpers for output a person reads in a terminal. */

/** Pads cells into aligned columns; numbers are right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
	const cells = [header, ...rows].map((row) => row.map((c) => String(c)));
	const widths = header.map((_, i) => Math.max(...cells.map((r) => displayWidth(r[i] ?? ""))));
	const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"));
	return cells
		.map((row) =>
			row
				.map((cell, i) => {
					const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - displayWidth(cell)));
					return numeric[i] ? pad + cell : cell + pad;
				})
				.join("  ")
				.trimEnd(),
		)
		.join("\n");
}

/** Terminal columns a string takes: wide (CJK, emoji) characters count two. */
export function displayWidth(text: string): number {
	let width = 0;
	for (const ch of text) {
		const code = ch.codePointAt(0) ?? 0;
		if (code < 0x20) continue;
		width += isWide(code) ? 2 : 1;
	}
	return width;
}

function isWide(code: number): boolean {
	return (
		(code >= 0x1100 && code <= 0x115f) ||
		(code >= 0x2e80 && code <= 0xa4cf) ||
		(code >= 0xac00 && code <= 0xd7a3) ||
		(code >= 0xf900 && code <= 0xfaff) ||
		(code >= 0xfe30 && code <= 0xfe4f) ||
		(code >= 0xff00 && code <= 0xff60) ||
		(code >= 0xffe0 && code <= 0xffe6) ||
		(code >= 0x1f300 && code <= 0x1faff) ||
		(code >= 0x20000 && code <= 0x3fffd)
	);
}

export { printable } from "../services/history/query/printable.ts";
