import { pino, stdSerializers, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from '../config/app-config.js';
import { requestContext } from './request-context.js';
import { REDACTED, scrubText, scrubValue } from './scrub.js';

/** Fields of a database error (TypeORM copies the driver's onto QueryFailedError) that carry values. */
const DATABASE_VALUE_FIELDS = ['parameters', 'driverError', 'detail', 'where', 'internalQuery'];

/** PostgreSQL's messages that quote the offending value: `invalid input syntax for type uuid: "…"`. */
const scrubDatabaseMessage = (text: string) =>
  text
    .replace(/(: )".*"$/gm, `$1${REDACTED}`)
    .replace(/\bvalue ".*?" is out of range/g, `value ${REDACTED} is out of range`);

/** An error as logged: scrubbed, and a failed query's parameters and quoted values left out. */
function serializeError(error: Error): unknown {
  const serialized = stdSerializers.err(error) as unknown as Record<string, unknown>;
  if (typeof serialized.query === 'string' || 'driverError' in serialized) {
    for (const field of DATABASE_VALUE_FIELDS) delete serialized[field];
    for (const field of ['message', 'stack'] as const)
      if (typeof serialized[field] === 'string')
        serialized[field] = scrubDatabaseMessage(serialized[field]);
  }
  return scrubValue(serialized);
}

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
        err: serializeError,
        error: serializeError,
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
    // Standard output, written asynchronously: lines logged while a write is under way go out
    // together with the next one (one write for many under load); pino flushes them at exit.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
