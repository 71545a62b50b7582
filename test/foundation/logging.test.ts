import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  createLogger,
  isoTime,
  writeRequestLine,
  type RequestLineFields,
} from '#src/platform/logging/logger.js';
import { requestContext } from '#src/platform/logging/request-context.js';
import { scrubText } from '#src/platform/logging/scrub.js';
import { ID_ONLY_TRACER } from '#src/platform/tracing/tracer.js';
import { PROBE_PAN, PROBE_SECRET_KEY, ProbeModule } from '../support/probe.module.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('logs', () => {
  let sut: TestGateway;
  let key: string;
  beforeAll(async () => {
    sut = await startTestGateway({}, [ProbeModule]);
    key = (await sut.newTenantWithKey('operator')).key;
  });
  afterAll(() => sut.close());

  it('never carry an API key, a card number or a CVV, wherever they appear', async () => {
    const id = randomUUID();
    await sut.app.inject({
      method: 'GET',
      url: `/v1/me`,
      headers: { ...bearer(key), 'x-request-id': id },
    });
    await sut.app.inject({ method: 'GET', url: `/v1/cards/${PROBE_PAN}`, headers: bearer(key) });
    await sut.app.inject({ method: 'GET', url: '/probe/fail', headers: bearer(key) });
    await sut.app.inject({
      method: 'POST',
      url: '/probe/echo',
      headers: bearer(key),
      payload: { pan: PROBE_PAN, note: `key ${key}`, cvv: '987' },
    });
    await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: bearer(key),
      payload: { slug: PROBE_PAN, name: PROBE_SECRET_KEY },
    });

    const all = sut.logs.join('\n');
    expect(sut.logs.length).toBeGreaterThan(5);
    for (const secret of [
      key,
      key.slice('ptk_12345678_'.length),
      PROBE_SECRET_KEY,
      PROBE_PAN,
      '4556 3907 5571 9395',
      '"987"',
      '"123"',
    ]) {
      expect({ secret, found: all.includes(secret) }).toEqual({ secret, found: false });
    }
    // What was scrubbed is still recognisable for whoever reads the log.
    expect(all).toContain('[PAN ****9395]');
    expect(all).toContain('[REDACTED]');
  });

  it('keep the request id on lines logged inside a handler after the body was parsed', async () => {
    const id = randomUUID();
    await sut.app.inject({
      method: 'POST',
      url: '/probe/echo',
      headers: { ...bearer(key), 'x-request-id': id },
      payload: { hello: 'world' },
    });
    const echo = sut.logs
      .map((line) => JSON.parse(line))
      .find(
        (entry) =>
          typeof entry.msg === 'string' &&
          entry.msg.startsWith('echo for card') &&
          entry.requestId === id,
      );
    expect(echo).toBeDefined();
    // And its trace, the same as the request line's.
    const completed = sut.logs
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'request completed' && entry.requestId === id);
    expect(echo.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(completed.traceId).toBe(echo.traceId);
  });
});

describe('scrubText', () => {
  it('masks Luhn-valid card numbers, grouped or not, and leaves other digit runs alone', () => {
    expect(scrubText('card 5217925525906273 ok')).toBe('card [PAN ****6273] ok');
    expect(scrubText('card 5217-9255-2590-6273')).toBe('card [PAN ****6273]');
    expect(scrubText('order 1234567890123')).toBe('order 1234567890123');
  });

  it('masks the shortest secrets it knows (seven characters)', () => {
    expect(scrubText('?code=x')).toBe('?code=[REDACTED]');
    expect(scrubText('Basic x')).toBe('Basic [REDACTED]');
  });

  it('masks bearer and basic credentials', () => {
    expect(scrubText('Authorization: Bearer abc.def')).toBe('Authorization: Bearer [REDACTED]');
    expect(scrubText('Basic c2tfdGVzdDo=')).toBe('Basic [REDACTED]');
  });
});

describe('the time of a log line', () => {
  it('is the ISO instant to the millisecond, as pino would write it, across seconds', () => {
    const instants = [
      Date.UTC(2026, 10, 26, 5, 31, 32, 0),
      Date.UTC(2026, 10, 26, 5, 31, 32, 7),
      Date.UTC(2026, 10, 26, 5, 31, 32, 45),
      Date.UTC(2026, 10, 26, 5, 31, 32, 999),
      Date.UTC(2026, 10, 26, 5, 31, 33, 120),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 1),
    ];
    const now = jest.spyOn(Date, 'now');
    try {
      for (const instant of instants) {
        now.mockReturnValue(instant);
        expect(isoTime()).toBe(`,"time":"${new Date(instant).toISOString()}"`);
      }
    } finally {
      now.mockRestore();
    }
  });
});

describe('the request line', () => {
  /** A logger at the level writing into an array of lines; the clock held still so times compare. */
  function capture(level: 'info' | 'warn') {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    return { logger: createLogger(level, sink), lines };
  }

  const cases: RequestLineFields[] = [
    {
      requestId: randomUUID(),
      tenantId: randomUUID(),
      traceId: undefined,
      method: 'GET',
      path: '/v1/accounts/acc-1/balances',
      status: 200,
      durationMs: 12,
    },
    {
      requestId: randomUUID(),
      tenantId: undefined,
      traceId: undefined,
      method: 'POST',
      path: '/v1/odd "path"/\\back/é/\u2028',
      status: 401,
      durationMs: 0,
    },
    {
      requestId: randomUUID(),
      tenantId: randomUUID(),
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      method: 'GET',
      path: '/v1/me',
      status: 200,
      durationMs: 3,
    },
    {
      requestId: randomUUID(),
      tenantId: undefined,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      method: 'GET',
      path: '/v1/me',
      status: 401,
      durationMs: 1,
    },
  ];

  it("is pino's own line for the same fields, key for key, in and out of a request's context", () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 10, 26, 9, 30, 0, 42));
    try {
      for (const fields of cases)
        for (const store of [
          undefined,
          { requestId: randomUUID(), tenantId: randomUUID() },
          {
            requestId: randomUUID(),
            span: ID_ONLY_TRACER.startSpan('GET /v1/me', 'server', undefined),
          },
          {
            requestId: randomUUID(),
            tenantId: randomUUID(),
            span: ID_ONLY_TRACER.startSpan('GET /v1/me', 'server', undefined),
          },
        ]) {
          const fast = capture('info');
          const pinos = capture('info');
          const write = () => {
            writeRequestLine(fast.logger, fields);
            pinos.logger.info({ ...fields }, 'request completed');
          };
          if (store) requestContext.run(store, write);
          else write();
          expect(fast.lines).toHaveLength(1);
          expect(fast.lines[0]).toBe(pinos.lines[0]);
          expect(JSON.parse(fast.lines[0])).toMatchObject({ msg: 'request completed' });
          expect(JSON.parse(fast.lines[0]).traceId).toBe(fields.traceId);
        }
    } finally {
      now.mockRestore();
    }
  });

  it('is not written below its level', () => {
    const quiet = capture('warn');
    writeRequestLine(quiet.logger, cases[0]);
    expect(quiet.lines).toEqual([]);
  });
});
