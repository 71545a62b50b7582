import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Consent } from './consent.entity.js';

/** A consent column's name in a hand-written statement's rows (columnsSql, hydrate): `c_<property>`. */
const columnAlias = (column: { propertyName: string }) => `c_${column.propertyName}`;

/**
 * The SQL of consents (table `consents`) outside the ledger: the reads of a tenant's consent, the
 * updates of what the bank answered, and the consent's columns for statements of other modules that
 * read it in their own round-trip (the consent-access admission). The row's creation and its status
 * changes are the provider ledger's.
 */
@Injectable()
export class ConsentsRepository {
  constructor(@InjectRepository(Consent) private readonly rows: Repository<Consent>) {}

  /** A consent not yet stored (for the ledger to write). */
  build(fields: Partial<Consent>): Consent {
    return this.rows.create(fields);
  }

  /** The tenant's consent with this id, or null. */
  findOfTenant(tenantId: string, id: string): Promise<Consent | null> {
    return this.rows.findOne({ where: { id, tenantId } });
  }

  /** The consent with this id; fails when there is none. */
  get(id: string): Promise<Consent> {
    return this.rows.findOneOrFail({ where: { id } });
  }

  async update(id: string, fields: Partial<Consent>): Promise<void> {
    await this.rows.update({ id }, fields);
  }

  /**
   * The consent's columns for a hand-written statement (each as "c_<property>"), and the consent made
   * of such a row (hydrate): for the consent-access admission, which reads the consent in the same
   * round-trip as it counts the request. With `unlessUnchanged` (an SQL condition), every column but
   * the id is NULL when it holds: the caller already has that version of the consent.
   */
  columnsSql(alias: string, { unlessUnchanged }: { unlessUnchanged?: string } = {}): string {
    return this.rows.metadata.columns
      .map((column) => {
        const value = `${alias}.${column.databaseName}`;
        // The id always: it says the consent was found.
        return unlessUnchanged && !column.isPrimary
          ? `CASE WHEN ${unlessUnchanged} THEN NULL ELSE ${value} END AS "${columnAlias(column)}"`
          : `${value} AS "${columnAlias(column)}"`;
      })
      .join(', ');
  }

  /**
   * The version of a consent row in a statement: it changes with every update of the row (the
   * row's transaction id and place), so a consent read before with the same version is still this.
   */
  static versionSql(alias: string): string {
    return `(${alias}.xmin::text || ${alias}.ctid::text)`;
  }

  /** The names columnsSql gives the columns, for a statement's select list. */
  columnNamesSql(): string {
    return this.rows.metadata.columns.map((column) => `"${columnAlias(column)}"`).join(', ');
  }

  hydrate(row: Record<string, unknown>): Consent | undefined {
    if (row.c_id === null || row.c_id === undefined) return undefined;
    const consent = this.rows.create();
    const driver = this.rows.manager.connection.driver;
    for (const column of this.rows.metadata.columns)
      column.setEntityValue(consent, driver.prepareHydratedValue(row[columnAlias(column)], column));
    return consent;
  }
}
