import { Inject, Injectable, type OnModuleInit, type OnApplicationShutdown } from '@nestjs/common';
import { stateGauge } from '../platform/metrics/state-gauge.js';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { AppConfig } from '../platform/config/app-config.js';
import { APP_CONFIG } from '../platform/config/config.module.js';
import { LOGGER } from '../platform/logging/logging.module.js';
import { Scheduler } from '../platform/scheduler/scheduler.js';
import { Metrics } from '../platform/metrics/metrics.service.js';
import { SecretsService } from '../platform/secrets/secrets.service.js';
import { claimFairly, type ClaimedDelivery } from './webhook-claim.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookEndpointHealth } from './webhook-endpoint-health.js';
import { nextAttemptDelayMs } from './webhook-retry.js';
import { openWebhookSecret } from './webhook-secrets.js';
import { sendWebhook, type SendResult } from './webhook-sender.js';
import { webhookHeaders } from './webhook-signature.js';
import type { AttemptOutcome } from './webhook.entities.js';

export { nextAttemptDelayMs, retryDelayMs } from './webhook-retry.js';

const JOB = 'webhook-delivery';

interface ClaimedAttempt extends ClaimedDelivery {
  leaseToken: string;
}

const truncate = (text: string | undefined) =>
  // eslint-disable-next-line no-control-regex -- control characters are what is replaced
  text === undefined ? null : text.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 500);

/**
 * Delivers the outbox at least once. Every WEBHOOK_WORKER_INTERVAL_MS it claims due attempts under a
 * lease (`FOR UPDATE SKIP LOCKED`, lease_until, and one attempt row per attempt number, unique), so that
 * of N replicas exactly one runs each attempt; it signs and POSTs, records the outcome, and schedules
 * the next attempt (back-off with jitter) or dead-letters the delivery after WEBHOOK_MAX_ATTEMPTS. A
 * replica killed mid-attempt leaves a lease that expires: the attempt is recorded as lease-expired and
 * the delivery is attempted again, by any replica. Attempts are shared fairly (webhook-claim.ts): per
 * endpoint and per tenant, so that one endpoint's or tenant's backlog never holds the others'. An
 * attempt that ends wakes the worker: while work is due it claims as room frees, the interval being
 * only how often an idle worker looks.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnModuleInit, OnApplicationShutdown {
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight on this replica, by tenant (each tenant's share is bounded). */
  private readonly tenantInFlight = new Map<string, number>();
  private stopping = false;
  /** This replica, as attempt rows name it. */
  readonly workerName = `${hostname()}/${process.pid}`.slice(0, 100);

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly secrets: SecretsService,
    private readonly health: WebhookEndpointHealth,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: JOB,
      intervalMs: this.config.webhooks.workerIntervalMs,
      run: () => this.tick(),
    });
    const backlog = () => this.deliveries.backlog();
    stateGauge(this.metrics, {
      name: 'portico_webhook_deliveries_pending',
      help: 'Webhook deliveries pending (due, or waiting for a retry or a paused endpoint)',
      read: async () => [{ value: (await backlog()).pending }],
    });
    stateGauge(this.metrics, {
      name: 'portico_webhook_oldest_pending_seconds',
      help: 'Age of the oldest pending webhook delivery (0 when none)',
      read: async () => [{ value: (await backlog()).oldestSeconds }],
    });
    stateGauge(this.metrics, {
      name: 'portico_webhook_endpoints_paused',
      help: 'Webhook endpoints paused after failing for WEBHOOK_PAUSE_AFTER_MS (resume: API or CLI)',
      read: async () => [{ value: (await backlog()).pausedEndpoints }],
    });
  }

  /** The claiming stops with the scheduler; the attempts under way finish. */
  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.inFlight]);
  }

  /** Claims what this replica has room for and starts those attempts; returns how many it started. */
  async tick(): Promise<number> {
    const room = this.config.webhooks.concurrency - this.inFlight.size;
    if (room <= 0 || this.stopping) return 0;
    let claimed: ClaimedAttempt[];
    try {
      claimed = await this.claim(room);
    } catch (error) {
      this.logger.error({ err: error }, 'webhook worker could not claim attempts');
      return 0;
    }
    for (const attempt of claimed) {
      this.tenantInFlight.set(
        attempt.tenantId,
        (this.tenantInFlight.get(attempt.tenantId) ?? 0) + 1,
      );
      const running = this.attempt(attempt)
        .catch((error: unknown) =>
          this.logger.error(
            { err: error, eventId: attempt.eventId, deliveryId: attempt.deliveryId },
            'webhook attempt failed to complete; its lease will expire and it is retried',
          ),
        )
        .finally(() => {
          this.inFlight.delete(running);
          const left = (this.tenantInFlight.get(attempt.tenantId) ?? 1) - 1;
          if (left > 0) this.tenantInFlight.set(attempt.tenantId, left);
          else this.tenantInFlight.delete(attempt.tenantId);
          // Room is free again: claim what is due now, not an interval later (else a replica delivers
          // at most WEBHOOK_CONCURRENCY per interval, and a backlog outgrows it).
          if (!this.stopping) this.scheduler.wake(JOB);
        });
      this.inFlight.add(running);
    }
    return claimed.length;
  }

  /** Runs every due attempt until none is left (tests, and a drain): returns how many it ran. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const started = await this.tick();
      await Promise.all([...this.inFlight]);
      if (started === 0) return total;
      total += started;
    }
  }

  private async claim(room: number): Promise<ClaimedAttempt[]> {
    const { maxAttempts, leaseMs, endpointConcurrency, concurrency, tenantSharePercent } =
      this.config.webhooks;
    const tenantShare = Math.max(1, Math.floor((concurrency * tenantSharePercent) / 100));
    const leaseToken = randomUUID();
    return this.deliveries.transaction(async (manager) => {
      // A delivery whose last attempt's worker died after the last allowed attempt: dead-lettered.
      const dead = await this.deliveries.deadLetterAbandoned(manager, maxAttempts);
      const rows = await claimFairly(this.deliveries, manager, {
        room,
        tenantRoom: (tenantId) => tenantShare - (this.tenantInFlight.get(tenantId) ?? 0),
        endpointConcurrency,
        maxAttempts,
        leaseMs,
        leaseToken,
      });
      const touched = [...dead, ...rows.map((row) => row.deliveryId)];
      if (touched.length > 0) {
        // The attempt a dead worker left in flight.
        const expired = await this.deliveries.expireOpenAttempts(manager, touched);
        for (let i = 0; i < expired; i++) this.metrics.recordWebhookAttempt('lease-expired');
      }
      for (let i = 0; i < dead.length; i++) this.metrics.recordWebhookAttempt('dead');
      for (const row of rows) await this.deliveries.startAttempt(manager, row, this.workerName);
      return rows.map((row) => ({ ...row, leaseToken }));
    });
  }

  private async attempt(claimed: ClaimedAttempt): Promise<void> {
    const target = await this.deliveries.target(claimed.eventId, claimed.endpointId);
    const open = (stored: string) => openWebhookSecret(this.secrets, claimed.endpointId, stored);
    const secrets = [open(target.secret_sealed)];
    if (target.previous_secret_sealed && target.previous_valid)
      secrets.push(open(target.previous_secret_sealed));
    const result = await sendWebhook(
      target.url,
      target.body,
      webhookHeaders(secrets, claimed.eventId, target.body),
      { timeoutMs: this.config.webhooks.timeoutMs, mode: this.config.mode },
    );
    await this.complete(claimed, result);
  }

  private async complete(claimed: ClaimedAttempt, result: SendResult): Promise<void> {
    const { maxAttempts, retryScheduleMs, jitterPercent } = this.config.webhooks;
    const delivered = result.error === undefined;
    const outcome: AttemptOutcome = delivered
      ? 'delivered'
      : result.timedOut
        ? 'timeout'
        : 'failed';
    // 410 Gone: the receiver says this address is gone for good; retrying it is pointless.
    const gone = result.status === 410;
    const next = delivered
      ? 'delivered'
      : gone || claimed.attempt >= maxAttempts
        ? 'dead'
        : 'pending';
    const delayMs =
      next === 'pending'
        ? nextAttemptDelayMs(claimed.attempt, result, retryScheduleMs, jitterPercent)
        : 0;
    const owned = await this.deliveries.transaction(async (manager) => {
      // The endpoint first, as a claim locks it: a claim that leased before this attempt's end is dated
      // before it (finished_at is taken after the lock), and a later one sees the endpoint's new state.
      const failures = await this.health.lock(manager, claimed.endpointId);
      await this.deliveries.finishAttempt(manager, claimed.deliveryId, claimed.attempt, {
        outcome,
        responseStatus: result.status ?? null,
        latencyMs: result.latencyMs,
        error: truncate(result.error),
      });
      const settled = await this.deliveries.settle(
        manager,
        claimed.deliveryId,
        claimed.leaseToken,
        next,
        delayMs,
      );
      if (!settled) return false;
      if (delivered) await this.health.delivered(manager, claimed.endpointId);
      else await this.health.failed(manager, claimed.endpointId, failures, result);
      return true;
    });
    const fields = {
      eventId: claimed.eventId,
      deliveryId: claimed.deliveryId,
      endpointId: claimed.endpointId,
      attempt: claimed.attempt,
      outcome,
      responseStatus: result.status,
      latencyMs: result.latencyMs,
    };
    this.metrics.recordWebhookAttempt(outcome);
    if (owned && next === 'dead') this.metrics.recordWebhookAttempt('dead');
    if (!owned)
      this.logger.warn(
        fields,
        'webhook attempt finished after its lease expired; not recorded again',
      );
    else if (next === 'dead')
      this.logger.warn(
        fields,
        gone
          ? 'webhook delivery dead-lettered: the receiver answered 410 Gone'
          : 'webhook delivery dead-lettered',
      );
    else this.logger.debug({ ...fields, next, retryInMs: delayMs }, 'webhook attempt finished');
  }
}
