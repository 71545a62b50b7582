import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BoundResources } from '../../platform/idempotency/bound-resources.js';
import { facade } from '../common/card-api.js';
import { irisView } from '../iris/card-iris.service.js';
import { refundView } from '../refunds/refund-failed.js';
import { walletView } from '../wallets/wallet-tokenization.js';
import type { CardResource, CardResourceKind } from './card-resource.entity.js';
import { CardStore } from './card-store.service.js';

/** Where each card write binds its Idempotency-Key, and how its answer shows the row. */
const BOUND: [prefix: string, kind: CardResourceKind, view: (row: CardResource) => unknown][] = [
  ['/v1/card/payments/', 'payment', (row) => facade('Payment', row.data)],
  ['/v1/card/refunds/', 'refund', refundView],
  ['/v1/card/customers/', 'customer', (row) => facade('Customer', row.data)],
  ['/v1/card/notifications/', 'notification', (row) => facade('Notification', row.data)],
  ['/v1/card/iris/sessions/', 'iris_session', irisView],
  ['/v1/card/wallets/tokenizations/', 'wallet_token', walletView],
];

/** Lets a repeat of a card write whose outcome was unknown answer the row once the resolver settled it. */
@Injectable()
export class CardBoundResources implements OnModuleInit {
  constructor(
    private readonly resources: BoundResources,
    private readonly store: CardStore,
  ) {}

  onModuleInit(): void {
    for (const [prefix, kind, view] of BOUND)
      this.resources.register({
        prefix,
        read: (tenantId, id) => this.store.boundState(tenantId, kind, id, view),
      });
  }
}
