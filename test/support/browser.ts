import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Debian's Chromium, headless, with a fresh profile and no background traffic (this machine has no internet). */
export async function launchBrowser(options: { ignoreHTTPSErrors?: boolean } = {}): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `The browser tests drive Debian's Chromium at ${CHROMIUM}, which is not installed: apt-get install chromium (no browser download is used)`,
    );
  const profile = mkdtempSync(join(tmpdir(), 'portico-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // The sandbox's card API has a development certificate that the browser does not know.
    ignoreHTTPSErrors: options.ignoreHTTPSErrors ?? false,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
