import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import type { TestRunState } from './global-setup.js';

/** Stops the embedded engine and removes the template the global setup made (global-setup.ts). */
export default async function globalTeardown(): Promise<void> {
  const state = globalThis as TestRunState;
  await state.porticoEmbedded?.stop();
  const template = state.porticoTemplate;
  if (template?.archive) rmSync(dirname(template.archive), { recursive: true, force: true });
  if (template?.database && template.adminUrl) {
    const client = new pg.Client({ connectionString: template.adminUrl });
    await client.connect();
    await client
      .query(`DROP DATABASE IF EXISTS ${template.database} WITH (FORCE)`)
      .finally(() => client.end());
  }
}
