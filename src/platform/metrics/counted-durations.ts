import type { Metric, Registry } from 'prom-client';

/** One label set's figures: observations per bucket (not cumulative), their sum and count. */
interface Series {
  labels: Record<string, string>;
  perBucket: Float64Array;
  sum: number;
  count: number;
}

interface MetricName {
  name: string;
  help: string;
}

type ThreeLabels = readonly [string, string, string];

/**
 * A counter and a duration histogram over the same three labels, exposed exactly as prom-client's
 * Counter and Histogram would be (`<counter>`, `<histogram>_bucket{le}`, `_sum`, `_count`, summed
 * across workers by the cluster registry), but kept in plain arrays: a label set's series is found
 * once, through maps keyed by its values, and each observation only adds to it. prom-client's own
 * metrics check and hash the labels on every call: on the hot read path that cost more than the
 * rest of the request's metrics.
 */
export class CountedDurations {
  private readonly series = new Map<string, Map<string, Map<string, Series>>>();

  constructor(
    registry: Registry,
    private readonly counter: MetricName,
    private readonly histogram: MetricName,
    private readonly labelNames: ThreeLabels,
    private readonly bounds: readonly number[],
  ) {
    const metric = (name: MetricName, type: 'counter' | 'histogram', values: () => unknown[]) =>
      ({
        ...name,
        type,
        aggregator: 'sum',
        get: () => Promise.resolve({ ...name, type, aggregator: 'sum', values: values() }),
        reset: () => this.series.clear(),
      }) as unknown as Metric;
    registry.registerMetric(metric(counter, 'counter', () => this.counterValues()));
    registry.registerMetric(metric(histogram, 'histogram', () => this.histogramValues()));
  }

  /** Counts one event of the label set (a, b, c) that took `seconds`. */
  observe(a: string, b: string, c: string, seconds: number): void {
    const series = this.seriesOf(a, b, c);
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]) bucket++;
    series.perBucket[bucket] += 1;
  }

  private seriesOf(a: string, b: string, c: string): Series {
    let byB = this.series.get(a);
    if (!byB) this.series.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (!byC) byB.set(b, (byC = new Map()));
    let series = byC.get(c);
    if (!series) {
      const [first, second, third] = this.labelNames;
      series = {
        labels: { [first]: a, [second]: b, [third]: c },
        // The last bucket holds what is above the highest bound (+Inf).
        perBucket: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      };
      byC.set(c, series);
    }
    return series;
  }

  private *all(): Generator<Series> {
    for (const byB of this.series.values()) for (const byC of byB.values()) yield* byC.values();
  }

  private counterValues() {
    return [...this.all()].map((series) => ({ labels: { ...series.labels }, value: series.count }));
  }

  private histogramValues() {
    const bucket = `${this.histogram.name}_bucket`;
    return [...this.all()].flatMap((series) => {
      let cumulative = 0;
      const buckets = this.bounds.map((le, index) => {
        cumulative += series.perBucket[index];
        return { labels: { ...series.labels, le }, value: cumulative, metricName: bucket };
      });
      return [
        ...buckets,
        { labels: { ...series.labels, le: '+Inf' }, value: series.count, metricName: bucket },
        {
          labels: { ...series.labels },
          value: series.sum,
          metricName: `${this.histogram.name}_sum`,
        },
        {
          labels: { ...series.labels },
          value: series.count,
          metricName: `${this.histogram.name}_count`,
        },
      ];
    });
  }
}
