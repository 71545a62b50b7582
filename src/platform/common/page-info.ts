import { ApiProperty } from '@nestjs/swagger';

/** Where a page stands in the whole result: the fields every paged answer carries beside its items. */
export abstract class PageInfo {
  @ApiProperty({ format: 'int32', minimum: 1, maximum: 100000 })
  page: number;

  @ApiProperty({ format: 'int32', minimum: 1, maximum: 200 })
  pageSize: number;

  /** How many match, over every page. */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  totalCount: number;
}
