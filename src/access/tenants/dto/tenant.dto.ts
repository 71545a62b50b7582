import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { PRINTABLE_TEXT, PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';
import type { Tenant } from '../tenant.entity.js';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

export class CreateTenantRequest {
  @ApiProperty({
    description: 'Short unique name: lowercase letters, digits and dashes',
    example: 'acme-budget',
    pattern: SLUG_PATTERN.source,
    minLength: 2,
    maxLength: 63,
  })
  @IsString()
  @Matches(SLUG_PATTERN, { message: `slug must match ${SLUG_PATTERN}` })
  slug: string;

  @ApiProperty({
    description: 'Display name of the fintech app',
    example: 'Acme Budget',
    minLength: 1,
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  @IsString()
  @Length(1, 200)
  @Matches(PRINTABLE_TEXT, { message: 'name must not contain control characters' })
  name: string;
}

export class TenantView {
  @ApiProperty({ format: 'uuid', maxLength: 36, example: '6f1c2a34-8d5e-4c0b-9a7f-1e2d3c4b5a69' })
  id: string;

  @ApiProperty({ example: 'acme-budget', pattern: SLUG_PATTERN.source, maxLength: 63 })
  slug: string;

  @ApiProperty({ example: 'Acme Budget', maxLength: 200, pattern: PRINTABLE_TEXT_SOURCE })
  name: string;

  @ApiProperty({ format: 'date-time', maxLength: 40, example: '2026-11-20T10:00:00.000Z' })
  createdAt: string;

  static of(tenant: Tenant): TenantView {
    return {
      id: tenant.id,
      slug: tenant.slug,
      name: tenant.name,
      createdAt: tenant.createdAt.toISOString(),
    };
  }
}

export class TenantList {
  /** How many tenants the list holds (it is never paged). */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 10000 })
  totalCount: number;

  @ApiProperty({ type: [TenantView], maxItems: 10000 })
  items: TenantView[];
}
