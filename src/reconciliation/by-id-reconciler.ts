import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import type { JsonObject } from '../platform/common/json.js';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import type { LedgerRow, LedgerTable } from '../provider-ledger/ledger-table.js';
import type { RunContext } from './run-context.js';

/** The values compared of a resource: its status and the kind's values (amounts as the provider writes them). */
export type ByIdValues = { status: string } & Record<string, string | number | null>;

/** A row of a table the ledger keeps, with the time Portico recorded it (the window's). */
export type ByIdRow = LedgerRow & { createdAt: Date };

/**
 * How the resources of one kind without a provider list are reconciled: Portico's rows of the window,
 * each read by id at the provider. One description per kind, one engine (ByIdReconciler).
 */
export interface ByIdKind<R extends ByIdRow = ByIdRow> {
  /** The drift's kind (`consent`, `payment`, `pos_payment`, …). */
  kind: string;
  table: LedgerTable<R>;
  /** Narrows the table's rows (alias `r`) to the kind's rows that the provider made (they have its id). */
  made(query: SelectQueryBuilder<R>): SelectQueryBuilder<R>;
  /** Portico's statuses after which the provider will not change its mind: only a sample is read. */
  final: readonly string[];
  /** Portico's statuses of a row whose outcome is not settled: the resolver's (counted `in-doubt`). */
  inDoubt?: readonly string[];
  /**
   * Settles a row in doubt by its read at the provider, as the resolver would, cause `reconciled`:
   * whether it was settled (`moved`) or is still in doubt. Without it, rows in doubt are the resolver's.
   */
  settle?(context: RunContext, row: R): Promise<boolean>;
  /** Portico's values of a row. */
  values(row: R): ByIdValues;
  /** Values that differ make an `amount-differs` drift, whatever the statuses. */
  fixed: readonly string[];
  /** Reads the row's resource at the provider (through RunContext.call): its values, or undefined when not found. */
  read(context: RunContext, row: R): Promise<ByIdValues | undefined>;
  /** Whether the provider's status is one Portico's can still reach (Portico behind). */
  behind(portico: string, provider: string): boolean;
  /** Moves the row to the provider's status, history cause `reconciled` (with its event); false when it moved first. */
  move(row: R, provider: ByIdValues): Promise<boolean>;
}

/** Rows fetched from Portico's table at a time. */
const BATCH = 20;

const differs = (portico: unknown, provider: unknown) =>
  portico !== null && provider !== null && portico !== provider;

/**
 * Reconciles a tenant's resources of which the provider has no list (Berlin Group's consents and
 * payments, the POS API's transactions): the window's rows (by the time Portico recorded them) that are
 * not final, and a random sample of the final ones (RECONCILIATION_FINAL_SAMPLE), each read by id.
 * Nothing made outside Portico can be found without a list, so nothing is adopted.
 */
@Injectable()
export class ByIdReconciler {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async reconcile(context: RunContext, kinds: readonly ByIdKind[]): Promise<void> {
    for (const kind of kinds) {
      for await (const rows of this.rowsOf(context, kind))
        for (const row of rows) {
          await this.reconcileRow(context, kind, row);
          // Each read is a provider call, as each page of a list is: a batch at the tenant's rate may
          // outlast the lease (20 reads at 1 a second), so the lease is renewed after each.
          await context.pageDone();
        }
    }
  }

  /** The window's rows not final, in batches by id, then the sample of final ones. */
  private async *rowsOf(context: RunContext, kind: ByIdKind): AsyncGenerator<ByIdRow[]> {
    const query = () => {
      const { tenantId, from, to } = context.window;
      const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000);
      return kind
        .made(this.dataSource.getRepository(kind.table.entity).createQueryBuilder('r'))
        .andWhere('r.tenant_id = :tenantId', { tenantId })
        .andWhere('r.created_at >= :start AND r.created_at < :end', {
          start: new Date(`${from}T00:00:00Z`),
          end,
        });
    };
    const final = [...kind.final];
    for (let after = ''; ;) {
      const rows = await query()
        .andWhere('r.status NOT IN (:...final)', { final })
        .andWhere('r.id > :after', { after: after || '00000000-0000-0000-0000-000000000000' })
        .orderBy('r.id', 'ASC')
        .take(BATCH)
        .getMany();
      if (rows.length > 0) yield rows;
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1].id;
    }
    const { finalSample } = this.config.reconciliation;
    if (finalSample === 0) return;
    const sample = await query()
      .andWhere('r.status IN (:...final)', { final })
      .orderBy('RANDOM()')
      .take(finalSample)
      .getMany();
    if (sample.length > 0) yield sample;
  }

  private async reconcileRow(context: RunContext, kind: ByIdKind, row: ByIdRow): Promise<void> {
    if (kind.inDoubt?.includes(row.status))
      return context.count(kind.settle && (await kind.settle(context, row)) ? 'moved' : 'in-doubt');
    const portico = kind.values(row);
    const provider = await kind.read(context, row);
    const flag = (driftClass: 'amount-differs' | 'portico-ahead' | 'portico-only') =>
      context.flag({
        kind: kind.kind,
        driftClass,
        resourceId: row.id,
        token: typeof portico.token === 'string' ? portico.token : null,
        portico: portico as JsonObject,
        provider: (provider ?? null) as JsonObject | null,
      });
    if (!provider) return flag('portico-only');
    if (kind.fixed.some((name) => differs(portico[name], provider[name])))
      return flag('amount-differs');
    if (portico.status === provider.status) return context.count('matched');
    if (!kind.behind(portico.status, provider.status)) return flag('portico-ahead');
    // Moved first by another replica or request: it is in step now, or the next run judges it.
    if (await kind.move(row, provider)) context.count('moved');
    else context.count(kind.values(row).status === provider.status ? 'matched' : 'in-doubt');
  }
}
