import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { statementsSent } from '../database/statement-counter.js';

export type BreakerState = 'closed' | 'half-open' | 'open';

/** Connections of a database pool at one instant. */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
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

  private readonly httpRequests = new Counter({
    name: 'portico_http_requests_total',
    help: 'Requests answered by the gateway, by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: 'portico_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer, by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly upstreamCalls = new Counter({
    name: 'portico_upstream_calls_total',
    help: 'Calls to an upstream API, by upstream, operation and outcome',
    labelNames: ['upstream', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly upstreamDuration = new Histogram({
    name: 'portico_upstream_call_duration_seconds',
    help: 'Duration of calls to an upstream API, by upstream, operation and outcome',
    labelNames: ['upstream', 'operation', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
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

  /** Each request is counted and timed in its label set's series, found once (prom-client hashes labels). */
  private readonly httpSeries = new SeriesCache(this.httpRequests, this.httpDuration, [
    'method',
    'route',
    'status',
  ]);

  private readonly upstreamSeries = new SeriesCache(this.upstreamCalls, this.upstreamDuration, [
    'upstream',
    'operation',
    'outcome',
  ]);

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
      help: 'Connections of the database pool: total open, idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const counts = readPool();
        if (!counts) return;
        this.set({ state: 'total' }, counts.total);
        this.set({ state: 'idle' }, counts.idle);
        this.set({ state: 'waiting' }, counts.waiting);
      },
    });
  }

  recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
    const series = this.httpSeries.get(method, route, String(status));
    series.count.inc();
    series.duration.observe(seconds);
  }

  recordUpstreamCall(upstream: string, operation: string, outcome: string, seconds: number): void {
    const series = this.upstreamSeries.get(upstream, operation, outcome);
    series.count.inc();
    series.duration.observe(seconds);
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

  /** Where the pool gauge reads its counts at each scrape; undefined counts leave it empty. */
  watchDbPool(source: () => PoolCounts | undefined): void {
    this.poolSource = source;
  }
}

/**
 * A counter and a histogram with the same labels, each label set's pair of children looked up once: the
 * hot path then only adds to them. Label sets are few (route templates, statuses, outcomes), so it stays small.
 */
class SeriesCache<L extends string> {
  private readonly series = new Map<
    string,
    { count: { inc(): void }; duration: { observe(value: number): void } }
  >();

  constructor(
    private readonly count: Counter<L>,
    private readonly duration: Histogram<L>,
    private readonly names: readonly [L, L, L],
  ) {}

  get(a: string, b: string, c: string) {
    const key = `${a}\u0000${b}\u0000${c}`;
    let found = this.series.get(key);
    if (!found) {
      const labels = { [this.names[0]]: a, [this.names[1]]: b, [this.names[2]]: c } as Record<
        L,
        string
      >;
      found = { count: this.count.labels(labels), duration: this.duration.labels(labels) };
      this.series.set(key, found);
    }
    return found;
  }
}
