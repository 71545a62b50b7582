import type { AppConfig } from '../config/app-config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded/embedded-postgres.js';

/** The configured PostgreSQL URL, or the embedded engine's (started or joined) when none is configured. */
export async function resolveDatabase(
  config: AppConfig,
): Promise<{ config: AppConfig; embedded?: EmbeddedPostgres }> {
  if (config.database.url) return { config };
  const embedded = await startEmbeddedPostgres(config.database.embeddedDir);
  return {
    embedded,
    // The embedded engine serialises connections; a small pool avoids queueing inside it.
    config: {
      ...config,
      database: {
        ...config.database,
        url: embedded.url,
        poolSize: Math.min(config.database.poolSize, 4),
      },
    },
  };
}
