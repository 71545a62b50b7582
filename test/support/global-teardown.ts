export default async function globalTeardown(): Promise<void> {
  await (globalThis as { porticoEmbedded?: { stop(): Promise<void> } }).porticoEmbedded?.stop();
}
