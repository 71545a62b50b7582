import { Gauge } from 'prom-client';
import type { Metrics } from './metrics.service.js';

/** One value of a state gauge and its labels. */
export interface StateSample {
  labels?: Record<string, string>;
  value: number;
}

export interface StateGaugeSpec {
  name: string;
  help: string;
  labelNames?: string[];
  /** Read at each scrape (the database's rows, a certificate); a failure leaves the gauge empty. */
  read(): Promise<StateSample[]> | StateSample[];
}

/**
 * A gauge of shared state read at each scrape, registered by the module that owns the state. Every
 * replica reads the same rows, so a dashboard takes `max` over instances; the workers of one primary
 * are merged the same way (`aggregator: 'max'`), never summed.
 */
export function stateGauge(metrics: Metrics, spec: StateGaugeSpec): void {
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [metrics.registry],
    aggregator: 'max',
    async collect() {
      this.reset();
      let samples: StateSample[];
      try {
        samples = await spec.read();
      } catch {
        return; // the database away: no value rather than a stale one (readiness says why)
      }
      for (const { labels, value } of samples)
        if (labels) this.set(labels, value);
        else this.set(value);
    },
  });
}
