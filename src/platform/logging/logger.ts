import { pino, stdSerializers, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from '../config/app-config.js';
import { requestContext } from './request-context.js';
import { scrubText, scrubValue } from './scrub.js';

/**
 * The one pino logger: JSON lines, the request id of the current request on every line,
 * and every line scrubbed of keys, secrets and card numbers before it is written.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'portico' },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      serializers: {
        err: (error: Error) => scrubValue(stdSerializers.err(error)),
        error: (error: Error) => scrubValue(stdSerializers.err(error)),
      },
      mixin() {
        const store = requestContext.getStore();
        if (!store) return {};
        return store.tenantId
          ? { requestId: store.requestId, tenantId: store.tenantId }
          : { requestId: store.requestId };
      },
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => scrubValue(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((arg) => (typeof arg === 'string' ? scrubText(arg) : arg)) as Parameters<
              typeof method
            >,
          );
        },
      },
    },
    destination,
  );
}
