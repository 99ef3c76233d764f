/**
 * The generator's only source of randomness: a seeded 32-bit PRNG (sfc32), so the same seed gives
 * the same bytes on every machine and every run. Never `Math.random`, never the clock.
 */

/** A seeded random source with the helpers the generator needs. */
export interface Rng {
	/** Uniform in [0, 1). */
	next(): number;
	/** Integer in [0, below). */
	int(below: number): number;
	/** Integer in [min, max]. */
	range(min: number, max: number): number;
	/** True with probability `p`. */
	chance(p: number): boolean;
	pick<T>(items: readonly T[]): T;
	/** An index in [0, n) skewed towards 0: `skew` 1 is uniform, larger is more Zipf-like. */
	skewed(n: number, skew: number): number;
	/** Log-normal around `median` (σ in natural-log units), clamped to [min, max]. */
	logNormal(median: number, sigma: number, min: number, max: number): number;
	/** 32 random bits. */
	u32(): number;
	/** An independent stream derived from this one's seed and a label (stable under reordering). */
	fork(label: string | number): Rng;
}

/** FNV-1a over a string: how labels and seeds become 32-bit seeds. */
export function hash32(text: string, seed = 0x811c9dc5): number {
	let h = seed >>> 0;
	for (let i = 0; i < text.length; i++) {
		h ^= text.charCodeAt(i);
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	return h >>> 0;
}

export function createRng(seed: number | string): Rng {
	const base = typeof seed === "string" ? hash32(seed) : seed >>> 0;
	let a = base ^ 0x9e3779b9;
	let b = hash32(String(base), 0x243f6a88);
	let c = hash32(String(base), 0xb7e15162);
	let d = 1;
	const u32 = (): number => {
		const t = (((a + b) | 0) + d) | 0;
		d = (d + 1) | 0;
		a = b ^ (b >>> 9);
		b = (c + (c << 3)) | 0;
		c = (c << 21) | (c >>> 11);
		c = (c + t) | 0;
		return t >>> 0;
	};
	for (let i = 0; i < 12; i++) u32();
	const next = () => u32() / 4294967296;
	let spare: number | undefined;
	const gaussian = (): number => {
		if (spare !== undefined) {
			const s = spare;
			spare = undefined;
			return s;
		}
		let u = 0;
		while (u === 0) u = next();
		const v = next();
		const r = Math.sqrt(-2 * Math.log(u));
		spare = r * Math.sin(2 * Math.PI * v);
		return r * Math.cos(2 * Math.PI * v);
	};
	const rng: Rng = {
		next,
		u32,
		int: (below) => Math.floor(next() * below),
		range: (min, max) => min + Math.floor(next() * (max - min + 1)),
		chance: (p) => next() < p,
		pick: (items) => items[Math.floor(next() * items.length)] as never,
		skewed: (n, skew) => Math.min(n - 1, Math.floor(n * next() ** skew)),
		logNormal: (median, sigma, min, max) => Math.min(max, Math.max(min, Math.round(median * Math.exp(sigma * gaussian())))),
		fork: (label) => createRng(hash32(`${base}:${label}`)),
	};
	return rng;
}
