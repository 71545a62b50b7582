import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { withinMs } from '../common/time-limit.js';
import { ReadinessRegistry } from './readiness-registry.js';
import type { CheckResult, ReadinessChecks, ReadinessReport } from './readiness-report.js';

export { CheckResult, ReadinessReport } from './readiness-report.js';

/** The longest the database check waits: a load balancer's probe must not hang with the database. */
const DATABASE_CHECK_TIMEOUT_MS = 3000;

@Injectable()
export class HealthService implements BeforeApplicationShutdown {
  private shuttingDown = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly registry: ReadinessRegistry,
  ) {}

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
  }

  async readiness(): Promise<ReadinessReport> {
    const [database, registered] = await Promise.all([this.checkDatabase(), this.registry.run()]);
    const checks: ReadinessChecks = { database, ...registered };
    if (this.shuttingDown) checks.lifecycle = { status: 'fail', detail: 'shutting down' };
    const failed = Object.values(checks).some((check) => check?.status === 'fail');
    return { status: failed ? 'fail' : 'ok', checks };
  }

  private async checkDatabase(): Promise<CheckResult> {
    const started = performance.now();
    try {
      await withinMs(this.dataSource.query('SELECT 1'), DATABASE_CHECK_TIMEOUT_MS);
      return {
        status: 'ok',
        detail: `SELECT 1 answered in ${Math.round(performance.now() - started)} ms`,
      };
    } catch (error) {
      return {
        status: 'fail',
        detail: `database unreachable: ${(error as Error).message}`.slice(0, 500),
      };
    }
  }
}
