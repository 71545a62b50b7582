import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger, serializeError } from '#src/platform/logging/logger.js';

/** A logger writing into an array of parsed lines. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: unknown[] } {
  const lines: unknown[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

class OddError extends Error {
  get driverError(): never {
    throw new Error('a getter that throws');
  }
}

function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop', message: 'cyclic' };
  value.self = value;
  return value;
}

function cyclicError(): Error {
  const error = new Error('cyclic error') as Error & { cause?: unknown; holder?: unknown };
  const holder: Record<string, unknown> = { error };
  error.holder = holder;
  error.cause = error;
  return error;
}

describe('the error serializer', () => {
  const inputs: [string, unknown][] = [
    ['a string (what a pg client error event once carried)', 'terminating connection'],
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a cyclic object', cyclic()],
    ['a cyclic error', cyclicError()],
    ['an error whose getter throws', new OddError('odd')],
    ['an error with odd fields', Object.assign(new Error('odd'), { code: 57, detail: { x: 1 } })],
    ['an object without a prototype', Object.create(null) as object],
    ['an array', [1, 'two', null]],
  ];

  it.each(inputs)('never throws, given %s', (_name, input) => {
    expect(() => serializeError(input)).not.toThrow();
  });

  it.each(inputs)('lets the logger write its line, given %s', (_name, input) => {
    const { logger, lines } = capturingLogger();
    logger.warn({ err: input }, 'listener lost');
    logger.warn({ error: input }, 'listener lost');
    logger.flush();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'warn', msg: 'listener lost' });
  });

  it('scrubs a string as it scrubs a message: no quoted value, no card number', () => {
    expect(serializeError('invalid input syntax for type uuid: "4556390755719395"')).toBe(
      'invalid input syntax for type uuid: [REDACTED]',
    );
  });

  it("leaves a failed query's parameters out", () => {
    const error = Object.assign(new Error('duplicate key'), {
      query: 'INSERT INTO t VALUES ($1)',
      parameters: ['sk_secret_value_1234'],
      driverError: { detail: 'Key (x)=(secret) already exists.' },
    });
    const serialized = serializeError(error) as Record<string, unknown>;
    expect(serialized.parameters).toBeUndefined();
    expect(serialized.driverError).toBeUndefined();
    expect(serialized.message).toBe('duplicate key');
  });
});
