import { Injectable } from '@nestjs/common';
import { CardStore } from '../store/card-store.service.js';

/** The merchant's branches (set up at the provider), to group payments by. */
@Injectable()
export class CardBranchesService {
  constructor(private readonly store: CardStore) {}

  list(tenantId: string, query: Record<string, string | number | undefined>) {
    return this.store.call(tenantId, 'listBranches', { query });
  }
}
