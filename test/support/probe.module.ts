import { Body, Controller, Get, Inject, Module, Post } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { LOGGER } from '#src/platform/logging/logging.module.js';

export const PROBE_PAN = '4556390755719395';
/** A value sent as a query parameter by /probe/failed-query: it must never reach a log. */
export const PROBE_IBAN = 'HU75118000170000001234567817';
export const PROBE_SECRET_KEY = 'ptk_abcd1234_ZmFrZS1zZWNyZXQtZm9yLWxvZy1zY3J1YmJpbmctdGVzdHMx';

/**
 * Test-only routes: one that fails unexpectedly, one whose query fails with a parameter, one that logs
 * sensitive data from inside a handler.
 */
@Controller('probe')
class ProbeController {
  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  @Get('failed-query')
  async failedQuery(): Promise<never> {
    await this.dataSource.query('SELECT $1::uuid AS id', [PROBE_IBAN]);
    throw new Error('unreachable: the query above fails');
  }

  @Get('fail')
  fail(): never {
    throw new Error(
      `database exploded while charging card ${PROBE_PAN} with key ${PROBE_SECRET_KEY}`,
    );
  }

  @Post('echo')
  echo(@Body() body: unknown): { ok: true } {
    this.logger.info(
      { body, card: { number: PROBE_PAN, cvv: '123' } },
      `echo for card ${PROBE_PAN.replace(/(\d{4})/g, '$1 ').trim()}`,
    );
    return { ok: true };
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
