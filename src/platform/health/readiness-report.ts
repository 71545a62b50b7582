import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PRINTABLE_TEXT_SOURCE } from '../common/text.js';

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

  @ApiPropertyOptional({
    type: CheckResult,
    description:
      'The client certificate (QWAC): valid, chained, with the roles the enabled services need; warn under 30 days to expiry',
  })
  certificate?: CheckResult;

  @ApiPropertyOptional({
    type: CheckResult,
    description:
      "The provider's open-banking API answers over mTLS (checked at most every 30 s; warn, not fail, when it does not: restarting Portico would not help)",
  })
  upstream?: CheckResult;

  @ApiPropertyOptional({
    type: CheckResult,
    description:
      "The provider's card API answers (any HTTP answer to an unauthenticated probe; at most every 30 s; warn when it does not). Absent when no card API is configured",
  })
  cardUpstream?: CheckResult;

  @ApiPropertyOptional({
    type: CheckResult,
    description:
      "The provider's POS API answers (any HTTP answer to an unauthenticated probe; at most every 30 s; warn when it does not). Absent when no POS API is configured",
  })
  posUpstream?: CheckResult;

  @ApiPropertyOptional({
    type: CheckResult,
    description:
      'Secrets at rest, as the last re-seal pass counted them: warn when values are sealed with a key that is not configured (SECRETS_KEY, SECRETS_KEYS). Absent where the re-seal job does not run',
  })
  secrets?: CheckResult;

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
