import { describe, expect, it } from '@jest/globals';
import {
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  parseTracestate,
} from '#src/platform/tracing/trace-context.js';
import { ID_ONLY_TRACER } from '#src/platform/tracing/tracer.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent (W3C Trace Context)', () => {
  it('reads the ids and the sampled flag of a version-00 header', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.sampled).toBe(false);
    // Flags other than sampled are kept out of the decision; only bit 0 counts.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)?.sampled).toBe(true);
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-02`)?.sampled).toBe(false);
  });

  it('reads the known fields of a later version, whatever follows them', () => {
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-the-future-brings`)).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
    });
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01`)).toMatchObject({ traceId: TRACE });
  });

  it.each([
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more fields', `00-${TRACE}-${SPAN}-01-00`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['a later version run on', `cc-${TRACE}-${SPAN}-01x`],
    ['no flags', `00-${TRACE}-${SPAN}`],
    ['garbage', 'drop table; --'],
    ['nothing', undefined],
    ['two headers', [`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-01`]],
  ])('refuses %s', (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('writes the header naming a span as the parent, sampled or not', () => {
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, sampled: true })).toBe(
      `00-${TRACE}-${SPAN}-01`,
    );
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, sampled: false })).toBe(
      `00-${TRACE}-${SPAN}-00`,
    );
  });
});

describe('tracestate', () => {
  it('keeps a well-formed list, several headers joined, blank members dropped', () => {
    expect(parseTracestate('rojo=00f067aa0ba902b7, congo=t61rcWkgMzE')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    );
    expect(parseTracestate(['rojo=1', 'tenant@vendor=x'])).toBe('rojo=1,tenant@vendor=x');
    expect(parseTracestate('rojo=1,,congo=2')).toBe('rojo=1,congo=2');
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`, 'rojo=1')?.tracestate).toBe('rojo=1');
  });

  it.each([
    ['an upper-case key', 'Rojo=1'],
    ['a value with =', 'rojo=a=b'],
    ['an empty value', 'rojo='],
    ['no value', 'rojo'],
    ['over 512 characters', `rojo=${'a'.repeat(510)}`],
    ['over 32 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
  ])('drops %s', (_what, header) => {
    expect(parseTracestate(header)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`, header)).not.toHaveProperty('tracestate');
  });
});

describe('ids', () => {
  it('are lower-case hex of the W3C lengths, never zero, and do not repeat', () => {
    const traces = new Set(Array.from({ length: 2000 }, () => newTraceId()));
    const spans = new Set(Array.from({ length: 2000 }, () => newSpanId()));
    expect(traces.size).toBe(2000);
    expect(spans.size).toBe(2000);
    for (const id of traces) expect(id).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
  });
});

describe('the tracer while export is off', () => {
  it("carries the caller's trace and flag on to new span ids, and starts unsampled traces of its own", () => {
    const caller = { traceId: TRACE, spanId: SPAN, sampled: true, tracestate: 'rojo=1' };
    const request = ID_ONLY_TRACER.startSpan('GET /v1/me', 'server', caller);
    expect(request.recording).toBe(false);
    expect(request.context).toMatchObject({ traceId: TRACE, sampled: true, tracestate: 'rojo=1' });
    expect(request.context.spanId).not.toBe(SPAN);
    const call = request.child('open-banking getBalances', 'client');
    expect(call.context).toMatchObject({ traceId: TRACE, sampled: true });
    expect(call.context.spanId).not.toBe(request.context.spanId);

    const own = ID_ONLY_TRACER.startSpan('GET /v1/me', 'server', undefined);
    expect(own.context.traceId).not.toBe(TRACE);
    expect(own.context.sampled).toBe(false);
  });
});
