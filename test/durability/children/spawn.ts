/** Starting the child scripts of the durability tests (TypeScript, through tsx). */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Absolute path of a child script in this folder. */
export function childScript(name: string): string {
	return fileURLToPath(new URL(`./${name}`, import.meta.url));
}

/** Starts `node --import tsx <script> ...args`, stdout piped, stderr collected. */
export function spawnChild(name: string, args: readonly string[]): ChildProcess & { stderrText: () => string } {
	const child = spawn(process.execPath, ["--import", "tsx", childScript(name), ...args], { stdio: ["ignore", "pipe", "pipe"] });
	let stderr = "";
	child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
	return Object.assign(child, { stderrText: () => stderr });
}

/** Resolves with the exit code (or signal) when the child ends. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
	if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
	return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** Resolves when the child prints the `count`-th line starting with `prefix` (the rest of that line). */
export function lineFrom(child: ChildProcess, prefix: string, count = 1): Promise<string> {
	return new Promise((resolve, reject) => {
		let buffer = "";
		const onData = (d: string) => {
			buffer += d;
			for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
				const line = buffer.slice(0, nl);
				buffer = buffer.slice(nl + 1);
				if (line.startsWith(prefix) && --count === 0) {
					child.stdout?.off("data", onData);
					resolve(line.slice(prefix.length));
					return;
				}
			}
		};
		child.stdout?.setEncoding("utf8").on("data", onData);
		child.once("exit", () => reject(new Error(`child ended before printing ${prefix}`)));
	});
}
