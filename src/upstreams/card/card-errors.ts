import type { UpstreamMessage } from '../http/upstream-caller.js';

/** Reads the card API's error body (`{ error: { status, code, message } }`). */
export function parseCardError(body: unknown): UpstreamMessage[] {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (!error || (typeof error.code !== 'number' && typeof error.code !== 'string')) return [];
  return [
    {
      code: String(error.code),
      text: typeof error.message === 'string' ? error.message : undefined,
    },
  ];
}
