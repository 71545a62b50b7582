/** A JSON object as stored in a jsonb column. */
export type JsonObject = Record<string, unknown>;
