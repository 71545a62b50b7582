import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { InDoubtSettlers } from '../platform/in-doubt/in-doubt-settlers.js';
import { ConsentsService } from './consents/consents.service.js';
import { PaymentsService } from './payments/payments.service.js';

/**
 * Open banking's part of the one resolver: consents and payments whose creation is in doubt, settled
 * with the bank once they are older than the upstream deadline (given up after RESOLVER_GIVE_UP_AFTER_MS).
 */
@Injectable()
export class OpenBankingInDoubtSettler {
  constructor(
    consents: ConsentsService,
    payments: PaymentsService,
    settlers: InDoubtSettlers,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    settlers.register({
      name: 'open-banking',
      settle: async () => {
        const olderThan = config.upstreams.openBanking.http.deadlineMs;
        const { giveUpAfterMs } = config.resolver;
        return (
          (await consents.resolveInDoubt(olderThan, giveUpAfterMs)) +
          (await payments.resolveInDoubt(olderThan, giveUpAfterMs))
        );
      },
    });
  }
}
