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

/**
 * An error as logged: scrubbed, and a failed query's parameters and quoted values left out. It never
 * throws, whatever it is given (a string, null, a cyclic object, an error whose getters throw): a
 * serializer that throws takes the process down from inside a log call.
 */
export function serializeError(error: unknown): unknown {
  try {
    if (error === null || typeof error !== 'object') {
      const text = typeof error === 'string' ? scrubDatabaseMessage(error) : error;
      return scrubValue(text);
    }
    const serialized = stdSerializers.err(error as Error) as unknown;
    if (serialized === null || typeof serialized !== 'object') return scrubValue(serialized);
    const fields = serialized as Record<string, unknown>;
    if (typeof fields.query === 'string' || 'driverError' in fields) {
      for (const field of DATABASE_VALUE_FIELDS) delete fields[field];
      for (const field of ['message', 'stack'] as const)
        if (typeof fields[field] === 'string') fields[field] = scrubDatabaseMessage(fields[field]);
    }
    return scrubValue(fields);
  } catch {
    return { type: 'Unserializable', message: 'the error could not be serialized' };
  }
}

/** The `service` every line carries (pino's base, and the request line built by hand). */
const SERVICE = 'portico';

let second = Number.NaN;
let secondPrefix = '';

/**
 * pino's `isoTime` (`,"time":"2026-11-26T05:31:32.123Z"`) without a Date and its formatting per line:
 * the text up to the second is made once a second, the milliseconds added to it.
 */
export function isoTime(): string {
  const now = Date.now();
  const ms = now % 1000;
  if (now - ms !== second) {
    second = now - ms;
    secondPrefix = `,"time":"${new Date(second).toISOString().slice(0, 20)}`;
  }
  return `${secondPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

/** The fields of the line written for every request as it completes. */
export interface RequestLineFields {
  requestId: string;
  tenantId: string | undefined;
  /** The request's W3C trace id. */
  traceId: string | undefined;
  method: string;
  /** Already scrubbed (`loggedPath`). */
  path: string;
  status: number;
  durationMs: number;
}

/** What writeRequestLine needs of a logger createLogger made: its output and the flush marker. */
const requestLineOutputs = new WeakMap<Logger, { stream: DestinationStream; logged: () => void }>();

/**
 * The "request completed" line, written for every request: the same line, key for key, that
 * `logger.info(fields, 'request completed')` writes (a test holds them equal), built straight into its
 * JSON text instead of through pino's general path (its hooks, mixin, formatters and key-by-key
 * serialisation cost several times as much, on every request). Its fields are made safe where they
 * are made (ids Portico issued or checked, numbers, a scrubbed path), so it skips the scrubbing pass.
 * A logger createLogger did not make (a child, say) writes it the general way.
 */
export function writeRequestLine(logger: Logger, fields: RequestLineFields): void {
  const output = requestLineOutputs.get(logger);
  if (!output) {
    logger.info({ ...fields }, 'request completed');
    return;
  }
  if (!logger.isLevelEnabled('info')) return;
  const tenant =
    fields.tenantId === undefined ? '' : `,"tenantId":${JSON.stringify(fields.tenantId)}`;
  const trace = fields.traceId === undefined ? '' : `,"traceId":${JSON.stringify(fields.traceId)}`;
  output.logged();
  output.stream.write(
    `{"level":"info"${isoTime()},"service":"${SERVICE}","requestId":${JSON.stringify(fields.requestId)}${tenant}${trace},"method":${JSON.stringify(fields.method)},"path":${JSON.stringify(fields.path)},"status":${fields.status},"durationMs":${fields.durationMs},"msg":"request completed"}\n`,
  );
}

/**
 * The one pino logger: JSON lines, the request id and trace id of the current request on every line,
 * and every line scrubbed of keys, secrets and card numbers before it is written.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const output = destination ? { stream: destination, logged: () => undefined } : standardOutput();
  const logger = pino(
    {
      level,
      base: { service: SERVICE },
      timestamp: isoTime,
      messageKey: 'msg',
      serializers: {
        err: serializeError,
        error: serializeError,
      },
      // Keys in the request line's order; pino leaves out those that are undefined.
      mixin() {
        const store = requestContext.getStore();
        if (!store) return {};
        return {
          requestId: store.requestId,
          tenantId: store.tenantId,
          traceId: store.span?.context.traceId,
        };
      },
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => scrubValue(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          output.logged();
          method.apply(
            this,
            args.map((arg) => (typeof arg === 'string' ? scrubText(arg) : arg)) as Parameters<
              typeof method
            >,
          );
        },
      },
    },
    output.stream,
  );
  requestLineOutputs.set(logger, output);
  return logger;
}

/** Bytes of log lines gathered before they are written (under load a write per line is a syscall each). */
const LOG_BUFFER_BYTES = 16384;
/** The longest a line waits in that buffer. */
const LOG_FLUSH_MS = 100;

/**
 * Standard output, written asynchronously and in blocks: lines are gathered up to LOG_BUFFER_BYTES
 * (and while a write is under way), and what waits is written every LOG_FLUSH_MS, so a line reaches
 * the output within that time; pino writes what is left at exit. A process killed outright (kill -9)
 * loses at most that last tenth of a second of lines.
 */
function standardOutput(): { stream: DestinationStream; logged: () => void } {
  const stream = pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    // sonic-boom wants its largest single write above the block size.
    maxWrite: 4 * LOG_BUFFER_BYTES,
  });
  let waiting = false;
  setInterval(() => {
    if (!waiting) return;
    waiting = false;
    stream.flush();
  }, LOG_FLUSH_MS).unref();
  return {
    stream,
    logged: () => {
      waiting = true;
    },
  };
}
