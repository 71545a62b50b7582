import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';
import { Auth } from '#src/access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { PRINTABLE_TEXT_SOURCE } from '#src/platform/common/text.js';
import { BRAND_ID_DOC } from '../consents/dto/consent.dto.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import { BrandsService } from './brands.service.js';

export class BrandView {
  @ApiProperty({
    description: 'Pass it as brandId',
    ...BRAND_ID_DOC,
    example: 'danube-bank',
  })
  brandId: string;

  @ApiProperty({
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
    example: 'Danube Bank Hungary Zrt. (sandbox)',
  })
  brandName: string;
}

export class BrandList {
  /** How many brands the provider lists (the list is never paged). */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 1000 })
  totalCount: number;

  @ApiProperty({ type: [BrandView], maxItems: 1000 })
  items: BrandView[];

  @ApiProperty({
    description: 'When Portico last read the list from the provider',
    format: 'date-time',
    maxLength: 40,
  })
  fetchedAt: string;
}

export class BrandsQuery {
  @ApiPropertyOptional({
    description:
      'Read the list from the provider now instead of the cache (at most five minutes old)',
    type: Boolean,
    default: false,
  })
  @IsOptional()
  @Transform(({ value }) => value === 'true' || value === true)
  @IsBoolean()
  refresh?: boolean;
}

@ApiTags('Brands')
@ApiStandardProblems()
@ApiProblems(UPSTREAM_PROBLEMS)
@Auth('app')
@Controller('v1/brands')
export class BrandsController {
  constructor(private readonly brands: BrandsService) {}

  @Get()
  @ApiOperation({
    summary: 'List the banks',
    description: 'The banks reachable through the provider, cached for five minutes.',
  })
  @ApiOkResponse({ type: BrandList })
  async listBrands(@Query() query: BrandsQuery): Promise<BrandList> {
    const { brands, fetchedAt } = await this.brands.list(query.refresh === true);
    return { totalCount: brands.length, items: brands, fetchedAt: fetchedAt.toISOString() };
  }
}
