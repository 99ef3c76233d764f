/**
 * The errors a query answers with. Every one names the parameter it is about, so a person (or a
 * model) can fix the call; none of them is a failure of pbot itself.
 */

/**
 * - `BAD_PARAMETER`: a parameter is malformed or out of range (a date that is not ISO-8601, a
 *   negative limit, an id with characters no id has).
 * - `UNKNOWN_ID`: a well-formed id that names no session or node of this workspace.
 */
export type QueryErrorCode = "BAD_PARAMETER" | "UNKNOWN_ID";

/** A query that cannot be answered as asked. Its message reads `<parameter>: <detail>`. */
export class QueryError extends Error {
	override readonly name = "QueryError";

	constructor(
		readonly code: QueryErrorCode,
		/** The parameter at fault, as the tool contract names it (`from`, `limit`, `childrenOffset`…). */
		readonly parameter: string,
		/** The message without the parameter name. */
		readonly detail: string,
	) {
		super(`${parameter}: ${detail}`);
	}
}

export function badParameter(parameter: string, detail: string): QueryError {
	return new QueryError("BAD_PARAMETER", parameter, detail);
}

export function unknownId(parameter: string, detail: string): QueryError {
	return new QueryError("UNKNOWN_ID", parameter, detail);
}

/** Whether an error is a `QueryError` (also across module copies, by name and code). */
export function isQueryError(err: unknown): err is QueryError {
	return err instanceof QueryError || (err instanceof Error && err.name === "QueryError" && typeof (err as QueryError).code === "string");
}
