import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length, Matches } from 'class-validator';
import { IsOmittable } from '#src/platform/common/omittable.js';
import { PRINTABLE_TEXT, PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';
import { SLUG_PATTERN } from './tenant.dto.js';
import { API_KEY_ROLES, type ApiKey, type ApiKeyRole } from '../api-key.entity.js';

export class IssueApiKeyRequest {
  @ApiProperty({
    description:
      "app uses the facade; auditor reads every tenant's audit trail; admin manages its own tenant's app and admin keys; operator runs the installation. Only an operator key issues auditor and operator keys.",
    enum: API_KEY_ROLES,
    example: 'app',
  })
  @IsIn(API_KEY_ROLES)
  role: ApiKeyRole;

  @ApiPropertyOptional({
    description: 'What the key is for',
    example: 'production backend',
    maxLength: 100,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  @IsOmittable()
  @IsString()
  @Length(0, 100)
  @Matches(PRINTABLE_TEXT, { message: 'label must not contain control characters' })
  label?: string;
}

export class ApiKeyView {
  @ApiProperty({ format: 'uuid', maxLength: 36, example: '0b8e8a55-7c0e-4c31-a2f5-9d2b7a1c3e44' })
  id: string;

  @ApiProperty({ format: 'uuid', maxLength: 36, example: '6f1c2a34-8d5e-4c0b-9a7f-1e2d3c4b5a69' })
  tenantId: string;

  @ApiProperty({
    description: 'Public part of the key, as in ptk_<prefix>_…',
    example: 'k3v9x2qa',
    maxLength: 8,
    pattern: '^[a-z0-9]{8}$',
  })
  prefix: string;

  @ApiProperty({ enum: API_KEY_ROLES, example: 'app' })
  role: ApiKeyRole;

  @ApiProperty({ example: 'production backend', maxLength: 100, pattern: PRINTABLE_TEXT_SOURCE })
  label: string;

  @ApiProperty({ format: 'date-time', maxLength: 40, example: '2026-11-20T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', maxLength: 40, nullable: true, type: String, example: null })
  lastUsedAt: string | null;

  @ApiProperty({ format: 'date-time', maxLength: 40, nullable: true, type: String, example: null })
  revokedAt: string | null;

  static of(key: ApiKey): ApiKeyView {
    return {
      id: key.id,
      tenantId: key.tenantId,
      prefix: key.prefix,
      role: key.role,
      label: key.label,
      createdAt: key.createdAt.toISOString(),
      lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
      revokedAt: key.revokedAt?.toISOString() ?? null,
    };
  }
}

export class IssuedApiKey extends ApiKeyView {
  @ApiProperty({
    description: 'The API key. Shown only in this answer: Portico keeps only its hash.',
    example: 'ptk_k3v9x2qa_3q2-7wXy0f0a9L1kT5Xn6Qm8Rr4Zp2Vb7Hc1Ds9Ej0G',
    maxLength: 56,
    pattern: '^ptk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$',
  })
  key: string;
}

export class ApiKeyList {
  /** How many keys the list holds (it is never paged). */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 10000 })
  totalCount: number;

  @ApiProperty({ type: [ApiKeyView], maxItems: 10000 })
  items: ApiKeyView[];
}

export class PrincipalView {
  @ApiProperty({ format: 'uuid', maxLength: 36, example: '6f1c2a34-8d5e-4c0b-9a7f-1e2d3c4b5a69' })
  tenantId: string;

  @ApiProperty({ example: 'demo', maxLength: 63, pattern: SLUG_PATTERN.source })
  tenantSlug: string;

  @ApiProperty({ format: 'uuid', maxLength: 36, example: '0b8e8a55-7c0e-4c31-a2f5-9d2b7a1c3e44' })
  keyId: string;

  @ApiProperty({ enum: API_KEY_ROLES, example: 'app' })
  role: ApiKeyRole;
}
