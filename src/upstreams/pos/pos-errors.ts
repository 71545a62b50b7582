import type { UpstreamMessage } from '../http/upstream-caller.js';

/** Reads the POS error body (`{ type, title, invalid-params? }`): one message per refused field, else one. */
export function parsePosError(body: unknown): UpstreamMessage[] {
  const error = body as
    | { type?: unknown; title?: unknown; 'invalid-params'?: { name?: unknown; reason?: unknown }[] }
    | undefined;
  if (!error || typeof error.type !== 'number') return [];
  const code = String(error.type);
  const title = typeof error.title === 'string' ? error.title : undefined;
  const fields = Array.isArray(error['invalid-params']) ? error['invalid-params'] : [];
  if (fields.length === 0) return [{ code, text: title }];
  return fields.map((field) => ({
    code,
    text: `${title ?? ''}: ${String(field.name)} ${String(field.reason)}`,
    path: typeof field.name === 'string' ? field.name : undefined,
  }));
}
