import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BoundResources } from '#src/platform/idempotency/bound-resources.js';
import { facade } from '../common/card-api.js';
import type { ProviderCustomer } from '../customers/card-customers.service.js';
import { irisView } from '../iris/card-iris.service.js';
import { refundView } from '../refunds/refund-failed.js';
import { walletView } from '../wallets/wallet-tokenization.js';
import { CardStore, type CardKind, type CardRow } from './card-store.service.js';

/** How a repeat of a card write answers its row once settled. */
type View<K extends CardKind> = (row: CardRow<K>) => unknown;

/** Where each card write binds its Idempotency-Key, and how its answer shows the row. */
const BOUND: { [K in CardKind]?: [prefix: string, view: View<K>] } = {
  payment: ['/v1/card/payments/', (row) => facade('Payment', row.data)],
  refund: ['/v1/card/refunds/', refundView],
  // A deleted customer's row keeps its fields (is_active false): it answers as the Customer it was.
  customer: [
    '/v1/card/customers/',
    (row) => facade('Customer', row.data as ProviderCustomer | null),
  ],
  notification: ['/v1/card/notifications/', (row) => facade('Notification', row.data)],
  iris_session: ['/v1/card/iris/sessions/', irisView],
  wallet_token: ['/v1/card/wallets/tokenizations/', walletView],
};

/** Lets a repeat of a card write whose outcome was unknown answer the row once the resolver settled it. */
@Injectable()
export class CardBoundResources implements OnModuleInit {
  constructor(
    private readonly resources: BoundResources,
    private readonly store: CardStore,
  ) {}

  onModuleInit(): void {
    for (const kind of Object.keys(BOUND) as CardKind[]) this.bind(kind);
  }

  private bind<K extends CardKind>(kind: K): void {
    const bound = BOUND[kind];
    if (!bound) return;
    const [prefix, view] = bound;
    this.resources.register({
      prefix,
      read: (tenantId, id) => this.store.boundState(tenantId, kind, id, view),
    });
  }
}
