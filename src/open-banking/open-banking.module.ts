import { Module } from '@nestjs/common';
import { AccountsModule } from './accounts/accounts.module.js';
import { BrandsModule } from './brands/brands.module.js';
import { ConsentAccessModule } from './consent-access/consent-access.module.js';
import { ConsentsModule } from './consents/consents.module.js';
import { FundsConfirmationModule } from './funds-confirmation/funds-confirmation.module.js';
import { PaymentsModule } from './payments/payments.module.js';
import { IdempotencyModule } from '../platform/idempotency/idempotency.module.js';
import { ProviderLedgerModule } from '../provider-ledger/provider-ledger.module.js';
import { OpenBankingBoundResources } from './bound-resources.js';
import { OpenBankingInDoubtSettler } from './in-doubt-settler.service.js';
import { ScaCallbackModule } from './sca-callback/sca-callback.module.js';

/** The open-banking facade: one module per capability, and its part of the resolver of writes in doubt. */
@Module({
  imports: [
    BrandsModule,
    ConsentsModule,
    ConsentAccessModule,
    AccountsModule,
    FundsConfirmationModule,
    PaymentsModule,
    ScaCallbackModule,
    IdempotencyModule,
    ProviderLedgerModule,
  ],
  providers: [OpenBankingInDoubtSettler, OpenBankingBoundResources],
})
export class OpenBankingModule {}
