import type { Logger } from 'pino';
import type { DataSourceOptions } from 'typeorm';
import { DatabaseClient } from '#src/shared/database-client.js';
import { QueryLogger } from './query-logger.js';
import { MIGRATIONS } from './migrations/index.js';

/**
 * The one place TypeORM is configured: used by the app, the CLI and the migration scripts. With a logger,
 * failed queries are logged with their SQL text and never their parameters (QueryLogger). The entities
 * come from above: the app's modules register theirs (autoLoadEntities), the tooling passes the full list.
 */
export function dataSourceOptions(
  url: string,
  poolSize: number,
  options: { logger?: Logger; entities?: DataSourceOptions['entities'] } = {},
): DataSourceOptions {
  const { logger, entities = [] } = options;
  return {
    type: 'postgres',
    url,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    // gen_random_uuid() is built into PostgreSQL 13+ (and PGlite): no extension to install, so no
    // CREATE EXTENSION attempt and no warning where the role may not create one.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    // Every client of the pool has an error listener from birth (DatabaseClient says why).
    extra: { max: poolSize, connectionTimeoutMillis: 10_000, Client: DatabaseClient },
    ...(logger ? { logger: new QueryLogger(logger) } : { logging: false }),
  };
}
