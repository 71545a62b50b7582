import type { Logger as PinoLogger } from 'pino';
import type { Logger as TypeOrmLogger } from 'typeorm';

/** A query as logged: one line, at most 2,000 characters. Never its parameters (IBANs, key hashes, states). */
const queryText = (query: string) => query.replace(/\s+/g, ' ').trim().slice(0, 2000);

/**
 * TypeORM's logger, writing to the app's pino logger: failed and slow queries with their SQL text only,
 * migrations as info. Successful queries are not logged. The parameters TypeORM passes are dropped here.
 */
export class QueryLogger implements TypeOrmLogger {
  constructor(private readonly logger: PinoLogger) {}

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    const code = typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
    this.logger.warn({ query: queryText(query), code }, 'query failed');
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({ query: queryText(query), durationMs: time }, 'slow query');
  }

  logSchemaBuild(): void {}

  logMigration(message: string): void {
    this.logger.info({ migration: message }, 'migration');
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn({ detail: String(message) }, 'database warning');
  }
}
