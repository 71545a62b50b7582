import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { SCA_RENEWAL_DAYS } from './consent.entity.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { WebhookOutboxService } from '#src/webhooks/webhook-outbox.service.js';
import { ConsentRenewalRepository } from './consent-renewal.repository.js';
const DAY_MS = 86_400_000;

/**
 * Sends `consent.renewal_due` WEBHOOK_RENEWAL_DUE_DAYS before a valid account-information consent stops
 * working: its scaRenewalDueAt (180 days after the last SCA) or the end of its validUntil, whichever
 * comes first. One replica at a time looks (an advisory lock), and each (consent, due date) is sent
 * once (the event's dedupe key): a fresh SCA moves the due date, and a new warning follows in time.
 */
@Injectable()
export class ConsentRenewalDueJob implements OnModuleInit {
  constructor(
    private readonly renewals: ConsentRenewalRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly outbox: WebhookOutboxService,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'consent-renewal-due',
      intervalMs: this.config.webhooks.renewalIntervalMs,
      run: () => this.run(),
    });
  }

  /** One pass: returns how many events it recorded (0 when another replica holds the lock). */
  async run(now = new Date()): Promise<number> {
    const days = this.config.webhooks.renewalDueDays;
    const sent = await this.renewals.withLock(async (manager) => {
      const horizon = new Date(now.getTime() + days * DAY_MS);
      const rows = await this.renewals.dueBy(manager, horizon);
      let recorded = 0;
      for (const row of rows) {
        const scaDue = row.last_sca_at
          ? new Date(new Date(row.last_sca_at).getTime() + SCA_RENEWAL_DAYS * DAY_MS)
          : null;
        // validUntil is the consent's last day (inclusive): it stops working at the next midnight UTC.
        const validEnd = row.valid_until
          ? new Date(new Date(`${row.valid_until}T00:00:00Z`).getTime() + DAY_MS)
          : null;
        const [dueAt, reason] =
          scaDue && (!validEnd || scaDue <= validEnd)
            ? [scaDue, 'sca-renewal']
            : [validEnd!, 'valid-until'];
        if (dueAt > horizon) continue;
        const id = await this.outbox.record(manager, {
          tenantId: row.tenant_id,
          type: 'consent.renewal_due',
          resourceId: row.id,
          dedupeKey: `consent.renewal_due:${row.id}:${dueAt.toISOString()}`,
          data: {
            consentId: row.id,
            status: row.status,
            dueAt: dueAt.toISOString(),
            reason,
            scaRenewalDueAt: scaDue?.toISOString() ?? null,
            validUntil: row.valid_until,
          },
        });
        if (id) recorded++;
      }
      if (recorded > 0) this.logger.info({ recorded }, 'consent.renewal_due events recorded');
      return recorded;
    });
    return sent ?? 0;
  }
}
