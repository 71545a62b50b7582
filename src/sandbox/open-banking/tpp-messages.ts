/** A Berlin Group error body (`TppMessageError` in openapi/psd2.yaml). */
export function tppError(
  code: string,
  text: string,
  path?: string,
): { tppMessages: { category: 'ERROR'; code: string; text: string; path?: string }[] } {
  return {
    tppMessages: [{ category: 'ERROR', code, text: text.slice(0, 500), ...(path ? { path } : {}) }],
  };
}
