import { Injectable } from '@nestjs/common';
import { dataOf, PosStore, type PosRow } from '../pos/store/pos-store.service.js';
import { PosTransactionsService } from '../pos/transactions/pos-transactions.service.js';
import type { ByIdKind, ByIdRow, ByIdValues } from './by-id-reconciler.js';

/** Portico's final statuses of a POS transaction (`VOIDED`: a captured payment whose void was captured). */
const FINAL = ['CAPTURED', 'FAILED', 'CANCELLED', 'VOIDED'];
const IN_DOUBT = ['creating', 'unknown'];

/** The provider shows a voided payment as `CAPTURED` (a void is a transaction of its own). */
const asProvider = (status: string) => (status === 'VOIDED' ? 'CAPTURED' : status);

const valuesOf = (
  status: string,
  token: string | null,
  result: { amount?: unknown; tip?: unknown } | null,
): ByIdValues => ({
  status,
  token,
  amount: typeof result?.amount === 'number' ? result.amount : null,
  tip: typeof result?.tip === 'number' ? result.tip : null,
});

/**
 * POS transactions as reconciliation reads them (capability `pos`): the POS API has no list of a day's
 * transactions (its pending list is the terminals' own, not reported to the ERP), so each is read by its
 * transaction_id. A row in doubt is settled as the resolver settles it (PosTransactionsService.resolve,
 * cause `reconciled`); a decided one is compared: the provider never changes a decided transaction, so
 * any other status is `portico-ahead`.
 */
@Injectable()
export class PosKinds {
  constructor(
    private readonly store: PosStore,
    private readonly transactions: PosTransactionsService,
  ) {}

  private kindOf(kind: 'pos_payment' | 'pos_void'): ByIdKind<PosRow> {
    return {
      kind,
      table: this.store.table as never,
      // `failed`: refused by the provider or never sent, not made there.
      made: (query) => query.andWhere("r.kind = :kind AND r.status <> 'failed'", { kind }),
      final: FINAL,
      inDoubt: IN_DOUBT,
      settle: (context, row) => context.call(() => this.transactions.resolve(row, 'reconciled')),
      values: (row) => valuesOf(asProvider(row.status), row.token, dataOf(row).result),
      fixed: ['amount', 'tip'],
      read: async (context, row) => {
        const answer = await context.call(() =>
          this.store.call(
            row.tenantId,
            'getPosTransaction',
            { path: { transactionId: row.token! } },
            row,
          ),
        );
        if (answer.status === 200 && answer.data)
          return valuesOf(answer.data.status, row.token, answer.data);
        if (answer.messages[0]?.code === '10005') return undefined;
        throw this.store.client.caller.refusal('getPosTransaction', answer);
      },
      behind: () => false,
      move: () => Promise.resolve(false),
    };
  }

  readonly kinds: readonly ByIdKind<ByIdRow>[] = [
    this.kindOf('pos_payment') as unknown as ByIdKind,
    this.kindOf('pos_void') as unknown as ByIdKind,
  ];
}
