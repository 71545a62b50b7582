import { Global, Module } from '@nestjs/common';
import { DbPoolMetrics } from './db-pool-metrics.js';
import { MetricsListener } from './metrics-listener.js';
import { Metrics } from './metrics.service.js';

/** Prometheus metrics: the `Metrics` service any module may record into, and its own listener. */
@Global()
@Module({
  providers: [Metrics, DbPoolMetrics, MetricsListener],
  exports: [Metrics, MetricsListener],
})
export class MetricsModule {}
