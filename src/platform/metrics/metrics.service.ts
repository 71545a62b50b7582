import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { statementsSent } from '../database/statement-counter.js';
import { CountedDurations } from './counted-durations.js';

export type BreakerState = 'closed' | 'half-open' | 'open';

/** Connections of a database pool at one instant. */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
  /** The pool's size limit (DATABASE_POOL_SIZE): saturation is (total - idle) / max. */
  max?: number;
}

const BREAKER_STATE_VALUES: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

// Seconds; upstream calls may run to their 15 s timeouts, so the top buckets go past them.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The gateway's Prometheus metrics, in a registry of its own (not prom-client's global one), so that
 * several gateways in one process do not clash. Served by MetricsListener on its own port.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /** Requests by route template and status: a counter and a duration histogram (hot path). */
  private readonly http = new CountedDurations(
    this.registry,
    {
      name: 'portico_http_requests_total',
      help: 'Requests answered by the gateway, by route template and status',
    },
    {
      name: 'portico_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by route template and status',
    },
    ['method', 'route', 'status'],
    DURATION_BUCKETS,
  );

  /** Upstream calls by operation and outcome: a counter and a duration histogram (hot path). */
  private readonly upstream = new CountedDurations(
    this.registry,
    {
      name: 'portico_upstream_calls_total',
      help: 'Calls to an upstream API, by upstream, operation and outcome',
    },
    {
      name: 'portico_upstream_call_duration_seconds',
      help: 'Duration of calls to an upstream API, by upstream, operation and outcome',
    },
    ['upstream', 'operation', 'outcome'],
    DURATION_BUCKETS,
  );

  /** Runs of each periodic job (the Scheduler's) by outcome, and their durations. */
  private readonly jobRuns = new Counter({
    name: 'portico_job_runs_total',
    help: 'Runs of a periodic job (resolver, audit seal and checkpoint, retention, webhook delivery, renewal), by outcome',
    labelNames: ['job', 'outcome'],
    registers: [this.registry],
  });

  private readonly jobDurations = new Histogram({
    name: 'portico_job_run_duration_seconds',
    help: 'Duration of a periodic job run',
    labelNames: ['job'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60],
    registers: [this.registry],
  });

  private readonly breakerState = new Gauge({
    name: 'portico_upstream_breaker_state',
    help: 'Circuit breaker state per upstream and key: 0 closed, 1 half-open, 2 open',
    labelNames: ['upstream', 'key'] as const,
    registers: [this.registry],
  });

  private readonly contractMismatches = new Counter({
    name: 'portico_upstream_contract_mismatches_total',
    help: "Upstream answers that broke the upstream's spec (answered as 502)",
    labelNames: ['upstream', 'operation'] as const,
    registers: [this.registry],
  });

  private readonly budgetRefusals = new Counter({
    name: 'portico_budget_refusals_total',
    help: "Unattended reads refused because the consent's daily budget (frequencyPerDay) was used up",
    registers: [this.registry],
  });

  private readonly webhookAttempts = new Counter({
    name: 'portico_webhook_attempts_total',
    help: 'Webhook attempts by outcome (delivered, failed, timeout, lease-expired) and deliveries dead-lettered (dead)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly accessLogNotCompleted = new Counter({
    name: 'portico_access_log_not_completed_total',
    help: 'Access-log rows whose outcome could not be written (sealed, or the database away): they keep `sent`',
    registers: [this.registry],
  });

  // Every worker counts the same rows: the cluster's figure is one worker's, not their sum.
  private readonly sealedValues = new Gauge({
    name: 'portico_sealed_values',
    help: 'Secrets at rest by the key that sealed them (key_id; key: current, previous, unconfigured, or unsealed), as the last re-seal pass counted',
    labelNames: ['key_id', 'key'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });

  private readonly reconciliationDrifts = new Counter({
    name: 'portico_reconciliation_drifts_total',
    help: 'Drifts reconciliation flagged (each once), by class: amount-differs, portico-ahead, portico-only',
    labelNames: ['class'] as const,
    registers: [this.registry],
  });

  private readonly reconciliationRuns = new Histogram({
    name: 'portico_reconciliation_run_duration_seconds',
    help: 'Duration of a reconciliation run, by outcome (succeeded, failed)',
    labelNames: ['outcome'] as const,
    buckets: [0.1, 0.5, 1, 5, 10, 60, 300, 1800, 7200],
    registers: [this.registry],
  });

  private readonly reconciliationLastSuccess = new Gauge({
    name: 'portico_reconciliation_last_success_timestamp_seconds',
    help: 'When a reconciliation run of the tenant last succeeded on this replica (Unix time): alert when it stops advancing',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });

  private poolSource?: () => PoolCounts | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const readPool = () => this.poolSource?.();
    new Counter({
      name: 'portico_db_statements_total',
      help: 'Statements sent to PostgreSQL by this process (each one a round-trip)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(statementsSent());
      },
    });
    new Gauge({
      name: 'portico_db_pool_connections',
      help: 'Connections of the database pool: total open, idle, requests waiting for one, and its size limit (max)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const counts = readPool();
        if (!counts) return;
        this.set({ state: 'total' }, counts.total);
        this.set({ state: 'idle' }, counts.idle);
        this.set({ state: 'waiting' }, counts.waiting);
        if (counts.max !== undefined) this.set({ state: 'max' }, counts.max);
      },
    });
  }

  recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.observe(method, route, String(status), seconds);
  }

  recordUpstreamCall(upstream: string, operation: string, outcome: string, seconds: number): void {
    this.upstream.observe(upstream, operation, outcome, seconds);
  }

  recordJobRun(job: string, outcome: 'ok' | 'failed', seconds: number): void {
    this.jobRuns.inc({ job, outcome });
    this.jobDurations.observe({ job }, seconds);
  }

  setBreakerState(upstream: string, key: string, state: BreakerState): void {
    this.breakerState.set({ upstream, key }, BREAKER_STATE_VALUES[state]);
  }

  recordContractMismatch(upstream: string, operation: string): void {
    this.contractMismatches.inc({ upstream, operation });
  }

  recordBudgetRefusal(): void {
    this.budgetRefusals.inc();
  }

  recordWebhookAttempt(outcome: string): void {
    this.webhookAttempts.inc({ outcome });
  }

  recordAccessLogNotCompleted(rows: number): void {
    this.accessLogNotCompleted.inc(rows);
  }

  setSealedValues(counts: { keyId: string; key: string; values: number }[]): void {
    this.sealedValues.reset();
    for (const { keyId, key, values } of counts)
      this.sealedValues.set({ key_id: keyId || 'none', key }, values);
  }

  recordReconciliationDrift(driftClass: string): void {
    this.reconciliationDrifts.inc({ class: driftClass });
  }

  recordReconciliationRun(tenantId: string, outcome: 'succeeded' | 'failed', ms: number): void {
    this.reconciliationRuns.observe({ outcome }, ms / 1000);
    if (outcome === 'succeeded')
      this.reconciliationLastSuccess.set({ tenant: tenantId }, Date.now() / 1000);
  }

  /** Where the pool gauge reads its counts at each scrape; undefined counts leave it empty. */
  watchDbPool(source: () => PoolCounts | undefined): void {
    this.poolSource = source;
  }
}
