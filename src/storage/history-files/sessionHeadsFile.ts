import { join, resolve } from "node:path";
import { PBOT_DIR } from "./archiveFiles.ts";
import { checkPbotFolder } from "./paths.ts";
import { entryKind, readJsonDocument } from "./regularFile.ts";
import { replaceFileSync } from "./writeJsonAtomic.ts";

/**
 * What discovery learnt from a session file's header line, without a path: its session id,
 * whether its `cwd` lies in the workspace, and the session id of the file it was forked from.
 */
export interface SessionHeadFacts {
	readonly id?: string;
	readonly inside: boolean;
	readonly parentId?: string;
}

/** Facts of a file as it was when its header was read: the same inode, at least this long, has the same header (Pi appends). */
export interface KnownSessionHead {
	readonly ino: number;
	readonly size: number;
	readonly facts: SessionHeadFacts;
}

const FORMAT = "pbot-session-heads";
/** 2: keys and scope hashed with FNV-1a (1: SHA-256; such a cache is ignored and written again). */
const VERSION = 2;
const FILE = "session-heads.cache";

/**
 * `.pi/pbot/session-heads.cache`: the header facts of the session files discovery scanned, so a
 * new Pi process does not open every session file of a large folder to read its header. A cache:
 * keyed by a hash of each file's folder and its name (no path), valid only for the workspace it was
 * made for (a hash of its path) and for a file still of the same inode and not shorter; anything
 * damaged or foreign is ignored. Written only where `.pi/pbot` already is (discovery does not make it).
 */
export class SessionHeadsFile {
	private readonly file: string;
	private readonly scope: string;

	constructor(private readonly workspace: string) {
		this.file = join(resolve(workspace), PBOT_DIR, FILE);
		this.scope = digest(resolve(workspace));
	}

	/** The cache's key of a file: its folder's hash (`folderKey`) and its name. */
	static keyOf(folder: string, name: string): string {
		return `${folder}/${name}`;
	}

	/** A folder's part of its files' keys: hashed once per folder, not once per file. */
	static folderKey(dir: string): string {
		return digest(resolve(dir));
	}

	load(): Map<string, KnownSessionHead> {
		const out = new Map<string, KnownSessionHead>();
		let doc: Readonly<Record<string, unknown>> | undefined;
		try {
			doc = readJsonDocument(this.file, FORMAT, VERSION);
		} catch {
			return out; // a link or a FIFO where the cache should be: not read, not trusted
		}
		if (!doc || doc.scope !== this.scope || typeof doc.files !== "object" || doc.files === null) return out;
		for (const [key, value] of Object.entries(doc.files as Record<string, unknown>)) {
			if (!Array.isArray(value) || value.length !== 5) continue;
			const [ino, size, id, inside, parentId] = value as unknown[];
			if (!Number.isSafeInteger(ino) || !Number.isSafeInteger(size) || typeof inside !== "boolean") continue;
			if ((id !== null && typeof id !== "string") || (parentId !== null && typeof parentId !== "string")) continue;
			const facts: SessionHeadFacts = {
				inside,
				...(typeof id === "string" ? { id } : {}),
				...(typeof parentId === "string" ? { parentId } : {}),
			};
			out.set(key, { ino: ino as number, size: size as number, facts });
		}
		return out;
	}

	/** Replaces the cache with `heads` (atomically); nothing when `.pi/pbot` is not there or is not a real folder. */
	save(heads: ReadonlyMap<string, KnownSessionHead>): void {
		const pbotDir = join(resolve(this.workspace), PBOT_DIR);
		try {
			checkPbotFolder(pbotDir);
			if (entryKind(pbotDir) !== "a folder") return;
			const files: Record<string, unknown[]> = {};
			for (const [key, { ino, size, facts }] of heads) files[key] = [ino, size, facts.id ?? null, facts.inside, facts.parentId ?? null];
			replaceFileSync(this.file, Buffer.from(JSON.stringify({ format: FORMAT, version: VERSION, scope: this.scope, files })));
		} catch {
			// a cache: the next process reads the headers again
		}
	}
}

/**
 * FNV-1a, 64 bits, over the text's UTF-16 code units, as 16 hex digits: a cache key, not a secret,
 * so discovery (every query's refresh) need not load `node:crypto` for it.
 */
export function digest(text: string): string {
	let lo = 0x84222325;
	let hi = 0xcbf29ce4;
	for (let i = 0; i < text.length; i++) {
		lo = (lo ^ text.charCodeAt(i)) >>> 0;
		// × 0x100000001b3 modulo 2^64, in 32-bit halves (lo × 0x1b3 stays below 2^53: exact).
		const low = lo * 0x1b3;
		hi = (Math.imul(hi, 0x1b3) + Math.floor(low / 0x100000000) + (lo << 8)) >>> 0;
		lo = low >>> 0;
	}
	return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
}
