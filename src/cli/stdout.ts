/**
 * The CLI's standard output. A terminal (and `/dev/null`, the other character device) gets
 * `process.stdout`. A pipe, a socket or a file gets its bytes written straight to fd 1: making
 * `process.stdout` for a pipe loads Node's `net` and stream modules, ≈ 4–5 ms of every query
 * process whose output another program reads (the agent's shell, a script, the bench) for one
 * write (whole processes, alternating).
 */
import { fstatSync, writeSync } from "node:fs";

/** Whether fd 1 and fd 2 are character devices; not there until asked. */
const characterDevices = new Map<1 | 2, boolean>();
/** Once anything went through `process.stdout`, everything does: its writes may still be queued. */
let viaStream = false;

function isCharacterDevice(fd: 1 | 2 = 1): boolean {
	let known = characterDevices.get(fd);
	if (known === undefined) {
		try {
			known = fstatSync(fd).isCharacterDevice();
		} catch {
			// No such fd to look at (closed): for stdout, `process.stdout` says what becomes of the
			// output; stderr then gets no progress.
			known = fd === 1;
		}
		characterDevices.set(fd, known);
	}
	return known;
}

/** Whether standard output is a terminal (highlighting is then on, unless NO_COLOR says otherwise). */
export function stdoutIsTerminal(): boolean {
	return isCharacterDevice() && process.stdout.isTTY === true;
}

/**
 * The width human output fits in: the terminal's, when standard output is one; else `COLUMNS`
 * when the environment sets it. None (a pipe, a file): whole lines, which scripts and `grep` want.
 */
export function outputColumns(env: NodeJS.ProcessEnv = process.env): number | undefined {
	if (stdoutIsTerminal()) {
		const columns = process.stdout.columns;
		if (Number.isInteger(columns) && columns > 0) return columns;
	}
	const set = Number(env.COLUMNS);
	return env.COLUMNS !== undefined && Number.isInteger(set) && set > 0 ? set : undefined;
}

/**
 * Highlighting of matches: on when standard output is a terminal, unless NO_COLOR is set
 * (https://no-color.org). Asked when output is formatted, not when the CLI loads.
 */
export function colorWanted(): boolean {
	return stdoutIsTerminal() && !process.env.NO_COLOR;
}

/** A text as a line (a line break added unless it ends with one) to standard output (1) or error (2). */
export function writeLine(fd: 1 | 2, text: string): void {
	const line = text.endsWith("\n") ? text : `${text}\n`;
	if (fd === 1) writeStdout(line);
	else process.stderr.write(line);
}

/** Writes `text` to standard output. When the reader is gone (`… | head`), the process ends quietly (exit 0). */
export function writeStdout(text: string): void {
	let rest: Buffer | string = text;
	if (!viaStream && !isCharacterDevice()) {
		const bytes = Buffer.from(text, "utf8");
		let at = 0;
		try {
			while (at < bytes.length) at += writeSync(1, bytes, at, bytes.length - at);
			return;
		} catch (err) {
			const code = (err as NodeJS.ErrnoException).code;
			if (code === "EPIPE") process.exit(0);
			// A pipe another program left non-blocking, full: the rest goes through the stream, which waits.
			if (code !== "EAGAIN") throw err;
			rest = bytes.subarray(at);
		}
	}
	viaStream = true;
	guardClosedPipe();
	process.stdout.write(rest);
}

/** Whether anything went through `process.stdout` (a test looks). */
export function wroteThroughStream(): boolean {
	return viaStream;
}

let pipeGuarded = false;
/**
 * `pbot-history search x | head` through the stream: when the reader goes away, stop quietly
 * instead of crashing on EPIPE. Any other failure to write (a full device: `> /dev/full`) is said in
 * one line and exits 1: thrown from here it printed a stack trace under a line of the bundle.
 */
function guardClosedPipe(): void {
	if (pipeGuarded) return;
	pipeGuarded = true;
	process.stdout.on("error", (err: NodeJS.ErrnoException) => {
		if (err.code === "EPIPE") process.exit(0);
		try {
			writeSync(2, `pbot-history: cannot write to standard output: ${err.message}\n`);
		} catch {
			// (Standard error failing too: the exit code says it.)
		}
		process.exit(1);
	});
}

/**
 * Whether standard error is a terminal: then long work shows its progress there (`writeStatus`).
 * Asked of fd 2 first: a pipe's or a file's stream (the agent's, a script's) is never made.
 */
export function stderrIsTerminal(): boolean {
	return isCharacterDevice(2) && process.stderr.isTTY === true;
}

/** A line of progress on standard error, written over the last (`undefined`: cleared). */
export function writeStatus(text: string | undefined): void {
	const width = process.stderr.columns;
	const line = text === undefined ? "" : Number.isInteger(width) && width > 1 ? text.slice(0, width - 1) : text;
	process.stderr.write(`\r${line}\x1b[K`);
}
