import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  BoundResources,
  type BoundResourceState,
} from '../platform/idempotency/bound-resources.js';
import type { ConsentKind } from './consents/consent.entity.js';
import { ConsentsService } from './consents/consents.service.js';
import { ConsentView } from './consents/dto/consent.dto.js';
import { PaymentView } from './payments/dto/payment.dto.js';
import { PaymentsService } from './payments/payments.service.js';

const IN_DOUBT = new Set(['creating', 'unknown']);

/** A created consent or payment as its creation answers it: the view, with Location. */
function created(view: { _links: { self: string } }): BoundResourceState {
  return { state: 'settled', body: view, headers: { location: view._links.self } };
}

/**
 * Lets a repeat of a consent or payment creation whose outcome was unknown answer the resource as the
 * resolver settled it (as stored: a repeat does not call the bank), and 409 while it is still in doubt.
 */
@Injectable()
export class OpenBankingBoundResources implements OnModuleInit {
  constructor(
    private readonly resources: BoundResources,
    private readonly consents: ConsentsService,
    private readonly payments: PaymentsService,
  ) {}

  onModuleInit(): void {
    const consent = (kind: ConsentKind) => async (tenantId: string, id: string) => {
      const found = await this.consents.find(tenantId, id, kind);
      return IN_DOUBT.has(found.status)
        ? { state: 'in-doubt' as const }
        : created(ConsentView.of(found));
    };
    this.resources.register({ prefix: '/v1/consents/', read: consent('ais') });
    this.resources.register({ prefix: '/v1/funds-confirmation-consents/', read: consent('cof') });
    this.resources.register({
      prefix: '/v1/payments/',
      read: async (tenantId, id) => {
        const found = await this.payments.find(tenantId, id);
        return IN_DOUBT.has(found.status) ? { state: 'in-doubt' } : created(PaymentView.of(found));
      },
    });
  }
}
