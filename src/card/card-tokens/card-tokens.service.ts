import { Injectable } from '@nestjs/common';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore } from '../store/card-store.service.js';

/**
 * Single-use card tokens, made with the tenant's public key (the scope the provider gives that key).
 * A token belongs to its merchant at the provider, so another tenant's is the provider's 404.
 */
@Injectable()
export class CardTokensService {
  constructor(private readonly store: CardStore) {}

  create(tenantId: string, form: CardForm<'CreateCardTokenForm'>) {
    return this.store.call(tenantId, 'createCardToken', { form }, undefined, { publicKey: true });
  }

  get(tenantId: string, token: string) {
    return this.store.call(tenantId, 'retrieveCardToken', { path: { tokenId: token } }, undefined, {
      publicKey: true,
    });
  }
}
