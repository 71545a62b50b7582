import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The paging every list of Portico's own rows takes (answered with PageInfo). */
export abstract class PageQuery {
  @ApiPropertyOptional({
    description: 'Page, from 1',
    default: 1,
    format: 'int32',
    minimum: 1,
    maximum: 100000,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100000)
  page?: number;

  @ApiPropertyOptional({
    description: 'Items a page',
    default: 50,
    format: 'int32',
    minimum: 1,
    maximum: 200,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  pageSize?: number;
}
