import { DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Tracer } from './tracer.js';

export const TRACER = Symbol('TRACER');

/** The gateway's tracer (createTracer), for the seams that start spans outside a request. */
@Global()
@Module({})
export class TracingModule implements OnApplicationShutdown {
  constructor(@Inject(TRACER) private readonly tracer: Tracer) {}

  static forRoot(tracer: Tracer): DynamicModule {
    return {
      module: TracingModule,
      providers: [{ provide: TRACER, useValue: tracer }],
      exports: [TRACER],
    };
  }

  /** The spans still waiting are exported before the process ends. */
  async onApplicationShutdown(): Promise<void> {
    await this.tracer.shutdown();
  }
}
