import { Injectable } from '@nestjs/common';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import { CardStore } from '../store/card-store.service.js';

/** The merchant's branches (set up at the provider), to group payments by. */
@Injectable()
export class CardBranchesService {
  constructor(private readonly store: CardStore) {}

  list(tenantId: string, query: CardQueryOf<'listBranches'>) {
    return this.store.call(tenantId, 'listBranches', { query });
  }
}
