import { Body, Controller, Module, Param, Post, Res } from '@nestjs/common';
import { IsIn, IsInt, IsOptional, IsString, MaxLength } from 'class-validator';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { Auth } from '#src/access/auth/auth.decorator.js';
import { dataSourceOptions } from '#src/platform/database/data-source-options.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { BoundResources } from '#src/platform/idempotency/bound-resources.js';
import { IdempotencyModule } from '#src/platform/idempotency/idempotency.module.js';
import { IdempotencyStore } from '#src/platform/idempotency/idempotency.store.js';
import { IdempotencyRecordsRepository } from '#src/platform/idempotency/idempotency-records.repository.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { testDatabaseUrl } from '../support/test-gateway.js';

/** What the probe handlers did, by the `ref` of the request body (each test uses its own refs). */
export const probe = {
  executions: new Map<string, number>(),
  gates: new Map<string, Promise<void>>(),
  runs(ref: string): number {
    return this.executions.get(ref) ?? 0;
  },
  /** Makes the handler for `ref` wait until the returned function is called. */
  hold(ref: string): () => void {
    let release!: () => void;
    this.gates.set(ref, new Promise<void>((resolve) => (release = resolve)));
    return release;
  },
};

class ProbePayment {
  @IsString()
  @MaxLength(50)
  ref: string;

  @IsInt()
  amount: number;

  @IsOptional()
  @IsIn(['ok', 'slow', 'fail-400', 'fail-500'])
  mode?: 'ok' | 'slow' | 'fail-400' | 'fail-500';
}

async function execute(body: ProbePayment, reply: FastifyReply, account: string) {
  const run = probe.runs(body.ref) + 1;
  probe.executions.set(body.ref, run);
  if (body.mode === 'slow') await probe.gates.get(body.ref);
  if (body.mode === 'fail-400')
    throw new ProblemException({
      status: 400,
      title: 'Bad Request',
      detail: `amount ${body.amount} refused`,
      extensions: { run },
    });
  if (body.mode === 'fail-500') throw new Error('the probe failed unexpectedly');
  const id = `${body.ref}-${run}`;
  reply.header('Location', `/idem-probe/payments/${id}`);
  return { id, account, amount: body.amount, run };
}

/** Test-only routes behind @Auth('app') and @Idempotent(): they count their runs and can wait or fail. */
@Controller('idem-probe')
class IdempotencyProbeController {
  @Post('accounts/:account/payments')
  @Auth('app')
  @Idempotent()
  pay(
    @Param('account') account: string,
    @Body() body: ProbePayment,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return execute(body, reply, account);
  }

  @Post('other')
  @Auth('app')
  @Idempotent()
  other(@Body() body: ProbePayment, @Res({ passthrough: true }) reply: FastifyReply) {
    return execute(body, reply, 'other');
  }
}

@Module({ imports: [IdempotencyModule], controllers: [IdempotencyProbeController] })
export class IdempotencyProbeModule {}

/** The same route, but its store's DataSource is closed: every read or write of a record fails. */
@Controller('idem-broken')
class BrokenStoreProbeController {
  @Post('payments')
  @Auth('app')
  @Idempotent()
  pay(@Body() body: ProbePayment, @Res({ passthrough: true }) reply: FastifyReply) {
    return execute(body, reply, 'broken');
  }
}

@Module({
  controllers: [BrokenStoreProbeController],
  providers: [
    BoundResources,
    {
      provide: IdempotencyStore,
      inject: [LOGGER],
      useFactory: async (logger: Logger) => {
        const closed = new DataSource(dataSourceOptions(testDatabaseUrl(), 1));
        await closed.initialize();
        await closed.destroy();
        return new IdempotencyStore(new IdempotencyRecordsRepository(closed), logger);
      },
    },
  ],
})
export class BrokenStoreProbeModule {}
