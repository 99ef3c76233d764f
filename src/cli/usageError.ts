/** A mistake in how the command was called: exit code 2. Its own module: commands loaded on demand throw it too. */
export class UsageError extends Error {
	override readonly name = "UsageError";
}
