/** The database the global setup migrated for this run (PostgreSQL at DATABASE_URL, or the embedded engine). */
export function testDatabaseUrl(): string {
  const url = process.env.PORTICO_TEST_DATABASE_URL;
  if (!url) throw new Error('PORTICO_TEST_DATABASE_URL is set by the global setup');
  return url;
}
