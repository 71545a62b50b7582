import type { DataSource } from 'typeorm';

/** The SQL that would bring the database in line with the entities; empty when migrations and entities agree. */
export async function findSchemaDrift(
  dataSource: DataSource,
): Promise<{ up: string[]; down: string[] }> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return { up: sql.upQueries.map((q) => q.query), down: sql.downQueries.map((q) => q.query) };
}
