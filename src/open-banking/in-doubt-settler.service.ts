import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { ProviderLedger } from '../provider-ledger/provider-ledger.service.js';
import type { Consent } from './consents/consent.entity.js';
import { CONSENTS, ConsentsService } from './consents/consents.service.js';
import type { Payment } from './payments/payment.entity.js';
import { PAYMENTS, PaymentsService } from './payments/payments.service.js';

/**
 * Open banking's part of the one resolver: consents and payments whose creation is in doubt, leased by
 * the ledger once they are older than the upstream deadline and settled with the bank (given up after
 * RESOLVER_GIVE_UP_AFTER_MS).
 */
@Injectable()
export class OpenBankingInDoubtSettler {
  constructor(
    consents: ConsentsService,
    payments: PaymentsService,
    ledger: ProviderLedger,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const { giveUpAfterMs, consentScaWindowMs } = config.resolver;
    ledger.onInDoubt('open-banking', () => config.upstreams.openBanking.http.deadlineMs, [
      {
        table: CONSENTS,
        settle: (consent: Consent) =>
          consents.settleInDoubt(consent, giveUpAfterMs, consentScaWindowMs),
      },
      {
        table: PAYMENTS,
        settle: (payment: Payment) => payments.settleInDoubt(payment, giveUpAfterMs),
      },
    ]);
  }
}
