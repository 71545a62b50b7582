import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { CheckResult } from '../health/readiness-report.js';
import { ReadinessRegistry } from '../health/readiness-registry.js';
import { LOGGER } from '../logging/logging.module.js';
import { Metrics } from '../metrics/metrics.service.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { SealedValuesRepository, type SealedTable } from './sealed-values.repository.js';
import { SecretsService } from './secrets.service.js';

export type { SealedTable } from './sealed-values.repository.js';

/** Rows a batch locks and seals anew in one transaction. */
const BATCH = 200;

/** One key's values, as counted after a pass. */
export interface KeyCount {
  /** The key id sealed values name; '' for values not sealed (written before secrets were). */
  keyId: string;
  /** current: SECRETS_KEY; previous: one of SECRETS_KEYS; unconfigured: no configured key opens them. */
  key: 'current' | 'previous' | 'unconfigured' | 'unsealed';
  values: number;
}

export interface ResealReport {
  resealed: number;
  /** Values no configured key opens (left as they are). */
  unopened: number;
  counts: KeyCount[];
}

/**
 * The re-seal after a key rotation: a periodic job (`secrets-reseal`) that seals every value held with
 * a previous key (or not sealed at all) anew with SECRETS_KEY, in batches, then counts the values per
 * key (portico_sealed_values). Values sealed with a key no longer configured are named in the log and
 * in readiness (warn): the key was retired too early and belongs back in SECRETS_KEYS. The tables are
 * declared by the modules that own them.
 */
@Injectable()
export class SecretsResealService implements OnModuleInit {
  private readonly tables: SealedTable[] = [];
  private latest?: ResealReport;
  /** The pass under way in this process: a pass asked for meanwhile (the CLI, a test) follows it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly rows: SealedValuesRepository,
    private readonly secrets: SecretsService,
    private readonly scheduler: Scheduler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly metrics?: Metrics,
    @Optional() private readonly readiness?: ReadinessRegistry,
  ) {}

  /** Declares a table of sealed values (by the module that owns it, as it starts). */
  register(table: SealedTable): void {
    this.tables.push(table);
  }

  onModuleInit(): void {
    const intervalMs = this.config.secrets.resealIntervalMs;
    this.scheduler.register({
      name: 'secrets-reseal',
      intervalMs,
      runAtStart: intervalMs > 0,
      run: () => this.run(),
    });
    if (intervalMs > 0) this.readiness?.register('secrets', () => this.check());
  }

  /** One pass: every outdated value sealed anew, then the values counted per key. */
  run(): Promise<ResealReport | undefined> {
    const pass = this.queue.then(() => this.pass());
    this.queue = pass.catch(() => undefined);
    return pass;
  }

  private async pass(): Promise<ResealReport | undefined> {
    if (!this.secrets.configured()) return undefined;
    const { current } = this.secrets.keyIds();
    let resealed = 0;
    let unopened = 0;
    for (const table of this.tables) {
      let after: string | null = null;
      for (;;) {
        const batch = await this.rows.resealBatch(
          table,
          current,
          after,
          BATCH,
          (id, column, stored) => this.resealOne(table, id, column, stored),
        );
        resealed += batch.resealed;
        unopened += batch.unopened;
        if (batch.rows < BATCH) break;
        after = batch.lastId;
      }
    }
    const counts = await this.count();
    this.latest = { resealed, unopened, counts };
    this.metrics?.setSealedValues(counts);
    const unconfigured = counts.filter((count) => count.key === 'unconfigured');
    if (unconfigured.length > 0)
      this.logger.error(
        { keys: unconfigured.map(({ keyId, values }) => ({ keyId, values })) },
        'sealed values use a key that is not configured: put it back in SECRETS_KEYS (their tenants get 503)',
      );
    if (resealed > 0)
      this.logger.info({ resealed, currentKeyId: current }, 'secrets sealed anew with SECRETS_KEY');
    return this.latest;
  }

  /** Values per key id, each key's role in the configured ring. */
  async count(): Promise<KeyCount[]> {
    const { current, opening } = this.secrets.keyIds();
    const totals = new Map<string, number>();
    for (const table of this.tables)
      for (const [keyId, values] of await this.rows.countByKey(table))
        totals.set(keyId, (totals.get(keyId) ?? 0) + values);
    const roleOf = (keyId: string): KeyCount['key'] =>
      keyId === ''
        ? 'unsealed'
        : keyId === current
          ? 'current'
          : opening.includes(keyId)
            ? 'previous'
            : 'unconfigured';
    return [...totals]
      .map(([keyId, values]) => ({ keyId, key: roleOf(keyId), values }))
      .sort((a, b) => a.keyId.localeCompare(b.keyId));
  }

  private resealOne(table: SealedTable, id: string, column: string, stored: string) {
    const context = table.context(id, column);
    try {
      const plain = table.plain?.(stored) ? stored : this.secrets.open(stored, context);
      return this.secrets.seal(plain, context);
    } catch {
      return undefined;
    }
  }

  private check(): CheckResult {
    if (!this.latest) return { status: 'ok', detail: 'sealed values not counted yet' };
    const { counts } = this.latest;
    const unconfigured = counts.filter((count) => count.key === 'unconfigured');
    if (unconfigured.length > 0)
      return {
        status: 'warn',
        detail: `values sealed with a key not configured: ${unconfigured.map((c) => `${c.keyId} (${c.values})`).join(', ')}; put it back in SECRETS_KEYS`,
      };
    const outdated = counts.filter((count) => count.key !== 'current');
    return {
      status: 'ok',
      detail:
        outdated.length === 0
          ? `every sealed value uses SECRETS_KEY (${this.secrets.keyIds().current})`
          : `values still to seal anew: ${outdated.map((c) => `${c.keyId || 'unsealed'} (${c.values})`).join(', ')}`,
    };
  }
}
