/** How a merchant key is shown: its prefix and last four characters (`sk_…4f2a`). */
export function maskKey(key: string): string {
  const prefix = /^[a-z]+_/.exec(key)?.[0] ?? '';
  return `${prefix}…${key.slice(-4)}`;
}
