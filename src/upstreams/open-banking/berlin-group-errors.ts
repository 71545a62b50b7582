import type { UpstreamMessage } from '../http/upstream-caller.js';

/** Reads a Berlin Group error body (`{ tppMessages: [{ category, code, text, path }] }`). */
export function parseTppMessages(body: unknown): UpstreamMessage[] {
  const messages = (body as { tppMessages?: unknown } | undefined)?.tppMessages;
  if (!Array.isArray(messages)) return [];
  return messages
    .filter(
      (m): m is { code: string; text?: unknown; path?: unknown } => typeof m?.code === 'string',
    )
    .map((m) => ({
      code: m.code,
      text: typeof m.text === 'string' ? m.text : undefined,
      path: typeof m.path === 'string' ? m.path : undefined,
    }));
}
