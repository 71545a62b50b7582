import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { CertificateStatusService } from '../../upstreams/open-banking/qwac/certificate-status.service.js';
import { PRINTABLE_TEXT_SOURCE } from '../common/text.js';
import { OpenBankingClient } from '../../upstreams/open-banking/open-banking.client.js';

const UPSTREAM_CHECK_INTERVAL_MS = 30_000;

export class CheckResult {
  @ApiProperty({ enum: ['ok', 'warn', 'fail'] })
  status: 'ok' | 'warn' | 'fail';

  @ApiPropertyOptional({
    maxLength: 500,
    example: 'SELECT 1 answered in 2 ms',
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  detail?: string;

  @ApiPropertyOptional({
    description: 'Certificate only: whole days until it expires (negative once expired)',
    format: 'int32',
    minimum: -100000,
    maximum: 100000,
    example: 364,
  })
  daysToExpiry?: number;
}

export class ReadinessChecks {
  @ApiProperty({ type: CheckResult, description: 'The database answers a query' })
  database: CheckResult;

  @ApiProperty({
    type: CheckResult,
    description:
      'The client certificate (QWAC): valid, chained, with the roles the enabled services need; warn under 30 days to expiry',
  })
  certificate: CheckResult;

  @ApiProperty({
    type: CheckResult,
    description:
      "The provider's open-banking API answers over mTLS (checked at most every 30 s; warn, not fail, when it does not: restarting Portico would not help)",
  })
  upstream: CheckResult;

  @ApiPropertyOptional({
    type: CheckResult,
    description: 'Present (failed) while the replica shuts down',
  })
  lifecycle?: CheckResult;
}

export class ReadinessReport {
  @ApiProperty({ enum: ['ok', 'fail'] })
  status: 'ok' | 'fail';

  @ApiPropertyOptional({
    type: ReadinessChecks,
    description: 'Each check, for an operator key only',
  })
  checks?: ReadinessChecks;
}

@Injectable()
export class HealthService implements BeforeApplicationShutdown {
  private shuttingDown = false;

  private upstreamCache?: { at: number; result: CheckResult };

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly certificates: CertificateStatusService,
    private readonly openBanking: OpenBankingClient,
  ) {}

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
  }

  async readiness(): Promise<ReadinessReport> {
    const [database, upstream] = await Promise.all([this.checkDatabase(), this.checkUpstream()]);
    const checks: ReadinessChecks = { database, certificate: this.checkCertificate(), upstream };
    if (this.shuttingDown) checks.lifecycle = { status: 'fail', detail: 'shutting down' };
    const failed = Object.values(checks).some((check) => check.status === 'fail');
    return { status: failed ? 'fail' : 'ok', checks };
  }

  private checkCertificate(): CheckResult {
    try {
      const { ok, problems, warnings, info } = this.certificates.check();
      const summary = `${info.organizationIdentifier ?? info.subject}; roles ${info.roles.join(', ') || 'none'}; expires ${info.validTo.toISOString().slice(0, 10)} (${info.daysToExpiry} days)`;
      if (!ok)
        return {
          status: 'fail',
          detail: `${problems.join('; ')} [${summary}]`.slice(0, 500),
          daysToExpiry: info.daysToExpiry,
        };
      return {
        status: warnings.length ? 'warn' : 'ok',
        detail: [...warnings, summary].join('; ').slice(0, 500),
        daysToExpiry: info.daysToExpiry,
      };
    } catch (error) {
      return {
        status: 'fail',
        detail: `cannot read the client certificate: ${(error as Error).message}`.slice(0, 500),
      };
    }
  }

  private async checkUpstream(): Promise<CheckResult> {
    const now = Date.now();
    if (this.upstreamCache && now - this.upstreamCache.at < UPSTREAM_CHECK_INTERVAL_MS)
      return this.upstreamCache.result;
    const started = performance.now();
    let result: CheckResult;
    try {
      const { response } = await this.openBanking.api.GET('/brands', {
        params: { header: { 'X-Request-ID': randomUUID() } },
      });
      const ms = Math.round(performance.now() - started);
      result = response.ok
        ? { status: 'ok', detail: `GET /brands answered ${response.status} in ${ms} ms` }
        : { status: 'warn', detail: `GET /brands answered ${response.status}` };
    } catch (error) {
      result = { status: 'warn', detail: (error as Error).message.slice(0, 500) };
    }
    this.upstreamCache = { at: now, result };
    return result;
  }

  private async checkDatabase(): Promise<CheckResult> {
    const started = performance.now();
    try {
      await this.dataSource.query('SELECT 1');
      return {
        status: 'ok',
        detail: `SELECT 1 answered in ${Math.round(performance.now() - started)} ms`,
      };
    } catch (error) {
      return { status: 'fail', detail: `database unreachable: ${(error as Error).message}` };
    }
  }
}
