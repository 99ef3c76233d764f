import { existsSync, lstatSync, mkdirSync, realpathSync, statSync, writeFileSync, promises as fsp } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";

/**
 * Whether `path` is `dir` or inside it. Only an absolute path can say where it is: a relative one
 * (in a session header or an old record) would be read against whatever folder we run in.
 */
export function isInside(path: string, dir: string): boolean {
	if (!isAbsolute(path)) return false;
	const rel = relative(resolve(dir), resolve(path));
	return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Whether something exists at `path` (any error reads as "no"). */
export async function pathExists(path: string): Promise<boolean> {
	try {
		await fsp.access(path);
		return true;
	} catch {
		return false;
	}
}

/**
 * What `.pi/pbot/.gitignore` says: history can hold pasted secrets, so nothing under `.pi/pbot` is
 * committed unless the person opts in (by deleting the file).
 */
export const PBOT_GITIGNORE = "# pbot history can hold pasted secrets: nothing here is committed. Delete this file to opt in to committing it.\n*\n";

/** `.pi/pbot` (or a folder in it) is a link, not a folder, or resolves outside its workspace; or the workspace is no folder to make it in. */
export class UnsafePbotFolderError extends Error {
	override readonly name = "UnsafePbotFolderError";
}

/**
 * Checks that `dir` (`.pi/pbot` or a folder in it), where it exists, is a real folder inside the
 * workspace: not a symbolic link (a cloned repository can carry one pointing anywhere), and not
 * reached through one that leads outside (`.pi` itself a link). pbot neither reads nor writes
 * through such a folder: an `UnsafePbotFolderError` says which and why.
 */
export function checkPbotFolder(pbotDir: string, dir: string = pbotDir): void {
	const workspace = dirname(dirname(resolve(pbotDir)));
	/** The deepest of `.pi/pbot` and `.pi` that is there: where what pbot reads or makes would really be. */
	let there: string | undefined = pbotDir;
	for (const folder of dir === pbotDir ? [pbotDir] : [pbotDir, dir]) {
		const s = lstatFolder(folder, workspace);
		if (!s) {
			if (folder === pbotDir) {
				// No history yet: fine in a workspace, an error where there is no workspace to keep one in.
				if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) throw noWorkspace(workspace);
				// `.pi/pbot` would be made in `.pi`, which may be a link leading outside (a cloned
				// repository can carry one): checked before anything is made there.
				there = lstatSync(dirname(pbotDir), { throwIfNoEntry: false }) ? dirname(pbotDir) : undefined;
			}
			break;
		}
		if (s.isSymbolicLink())
			throw new UnsafePbotFolderError(`${folder} is a symbolic link: pbot keeps history only in a real folder inside the workspace (remove the link)`);
		if (!s.isDirectory()) throw new UnsafePbotFolderError(`${folder} is not a folder (remove it)`);
	}
	// (No `.pi` yet: made in the workspace itself.)
	if (there === undefined) return;
	// The C library's realpath: one call, where Node's JavaScript one looks at each component in
	// turn (≈ 0.06 against 0.12–0.35 ms a pair here; a search checks a dozen times or more).
	let real: string;
	try {
		real = realpathSync.native(there);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
		throw new UnsafePbotFolderError(`${there} is a symbolic link to nothing: pbot keeps history only in a real folder inside the workspace (remove the link)`);
	}
	if (!isInside(real, realpathSync.native(workspace)))
		throw new UnsafePbotFolderError(
			there === pbotDir
				? `${pbotDir} resolves to ${real}, outside the workspace: pbot neither reads nor writes there`
				: `${there} resolves to ${real}, outside the workspace: pbot neither reads nor writes there (it would make ${pbotDir} in it)`,
		);
}

/**
 * `lstat` of a folder of `.pi/pbot`; a file where a folder above it should be (`.pi` itself a file)
 * is said as such, not as Node's `ENOTDIR … lstat '…/.pi/pbot/history'`.
 */
function lstatFolder(folder: string, workspace?: string): ReturnType<typeof lstatSync> {
	try {
		return lstatSync(folder, { throwIfNoEntry: false });
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "ENOTDIR") throw err;
		// The nearest thing above that is there is the file in the way (what is below a file is not
		// there either: ENOTDIR again).
		let above = dirname(folder);
		while (dirname(above) !== above) {
			let s: ReturnType<typeof lstatSync>;
			try {
				s = lstatSync(above, { throwIfNoEntry: false });
			} catch {
				s = undefined;
			}
			if (s) break;
			above = dirname(above);
		}
		if (workspace !== undefined && resolve(above) === resolve(workspace)) throw noWorkspace(workspace);
		throw new UnsafePbotFolderError(`${above} is not a folder: pbot keeps its files in ${folder} (move or rename that file)`);
	}
}

/** The workspace named is not a folder: pbot makes its `.pi/pbot` in one, and never the workspace itself. */
function noWorkspace(workspace: string): UnsafePbotFolderError {
	return new UnsafePbotFolderError(`${workspace} is not an existing folder: pbot makes its .pi/pbot inside a workspace, never the workspace itself`);
}

/**
 * Makes a folder under the workspace's `.pi/pbot` (`dir`, or `pbotDir` itself), after checking
 * that what is there is safe (`checkPbotFolder`). When `.pi/pbot` is made here, its `.gitignore`
 * is written with it; one a person deleted later is not put back.
 */
export function makePbotFolder(pbotDir: string, dir: string = pbotDir): void {
	checkPbotFolder(pbotDir, dir);
	if (!existsSync(pbotDir)) {
		// `.pi`, then `.pi/pbot`, each alone: never the workspace or a folder above it. A workspace
		// path that names nothing (a typo, a folder removed meanwhile) is an error, not a new tree.
		for (const folder of [dirname(pbotDir), pbotDir]) {
			try {
				mkdirSync(folder);
			} catch (err) {
				const code = (err as NodeJS.ErrnoException).code;
				if (code === "ENOENT" || code === "ENOTDIR") throw noWorkspace(dirname(dirname(resolve(pbotDir))));
				if (code !== "EEXIST") throw err;
			}
		}
		try {
			writeFileSync(join(pbotDir, ".gitignore"), PBOT_GITIGNORE, { flag: "wx" });
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
		}
	}
	if (dir !== pbotDir) mkdirSync(dir, { recursive: true });
	checkPbotFolder(pbotDir, dir); // made meanwhile by someone else: looked at again
}

/**
 * A folder's identity on its file system (device and inode): the scope of the locks kept in it, so
 * a lock file copied with a workspace (its holder alive, renewing the original) is stale in the copy.
 */
export function folderScope(dir: string): string {
	const s = statSync(dir);
	return `${s.dev}:${s.ino}`;
}
