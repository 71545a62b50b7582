import type { AppConfig } from '../config/app-config.js';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
  type EngineSupervisor,
} from './embedded/embedded-postgres.js';

/**
 * The configured PostgreSQL URL, or the embedded engine's (started or joined) when none is configured.
 * The gateway's primary passes a supervisor, so that an engine that dies is started again.
 */
export async function resolveDatabase(
  config: AppConfig,
  supervisor?: EngineSupervisor,
): Promise<{ config: AppConfig; embedded?: EmbeddedPostgres }> {
  if (config.database.url) return { config };
  const embedded = await startEmbeddedPostgres(config.database.embeddedDir, supervisor);
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
