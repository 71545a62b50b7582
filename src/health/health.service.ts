import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { PRINTABLE_TEXT_SOURCE } from '../common/text.js';

export class CheckResult {
  @ApiProperty({ enum: ['ok', 'warn', 'fail'] })
  status: 'ok' | 'warn' | 'fail';

  @ApiPropertyOptional({ maxLength: 500, example: 'SELECT 1 answered in 2 ms', pattern: PRINTABLE_TEXT_SOURCE })
  detail?: string;
}

export class ReadinessChecks {
  @ApiProperty({ type: CheckResult, description: 'The database answers a query' })
  database: CheckResult;

  @ApiPropertyOptional({ type: CheckResult, description: 'Present (failed) while the replica shuts down' })
  lifecycle?: CheckResult;
}

export class ReadinessReport {
  @ApiProperty({ enum: ['ok', 'fail'] })
  status: 'ok' | 'fail';

  @ApiProperty({ type: ReadinessChecks })
  checks: ReadinessChecks;
}

@Injectable()
export class HealthService implements BeforeApplicationShutdown {
  private shuttingDown = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
  }

  async readiness(): Promise<ReadinessReport> {
    const checks: ReadinessChecks = { database: await this.checkDatabase() };
    if (this.shuttingDown) checks.lifecycle = { status: 'fail', detail: 'shutting down' };
    const failed = Object.values(checks).some((check) => check.status === 'fail');
    return { status: failed ? 'fail' : 'ok', checks };
  }

  private async checkDatabase(): Promise<CheckResult> {
    const started = performance.now();
    try {
      await this.dataSource.query('SELECT 1');
      return { status: 'ok', detail: `SELECT 1 answered in ${Math.round(performance.now() - started)} ms` };
    } catch (error) {
      return { status: 'fail', detail: `database unreachable: ${(error as Error).message}` };
    }
  }
}
