import { MigrationExecutor, type DataSource } from 'typeorm';

/** An arbitrary, fixed key: every Portico process that migrates this database takes the same lock. */
const MIGRATION_LOCK_KEY = 74_111_001;

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so that replicas starting together
 * migrate one after the other (the second finds nothing left to do) instead of racing.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      // On the lock's own connection: a pool of one must not wait for a second connection.
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      await executor.executePendingMigrations();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
