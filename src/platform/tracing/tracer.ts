import type { Logger } from 'pino';
import type { TracingConfig } from '../config/app-config.js';
import { newSpanId, newTraceId, type SpanContext } from './trace-context.js';

export type SpanKind = 'server' | 'client' | 'internal';

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** A unit of work in a trace, ended once. Attributes are only worth building when it is `recording`. */
export interface Span {
  readonly context: SpanContext;
  /** Whether anything is kept of this span (export on and the trace sampled); false: ids only. */
  readonly recording: boolean;
  /** A span under this one, in the same trace (made by the tracer that made this one). */
  child(name: string, kind: SpanKind, attributes?: SpanAttributes): Span;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed; `errorType` says how (`timeout`, `500`, …). */
  fail(errorType: string): void;
  end(): void;
}

export interface Tracer {
  /** Whether spans leave the process (OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  readonly exporting: boolean;
  /** A span under `parent` (a caller's, from its traceparent), or the first of a new trace. */
  startSpan(
    name: string,
    kind: SpanKind,
    parent: SpanContext | undefined,
    attributes?: SpanAttributes,
  ): Span;
  /** Sends what waits and stops (at shutdown). */
  shutdown(): Promise<void>;
}

/**
 * A span that is only its ids: what every span is while export is off. The trace id still reaches the
 * logs, the problem bodies and the provider (traceparent); a trace Portico starts is not sampled, a
 * caller's sampled flag is passed on.
 */
class IdSpan implements Span {
  readonly recording = false;
  readonly context: SpanContext;

  constructor(parent: SpanContext | undefined) {
    this.context = parent
      ? {
          traceId: parent.traceId,
          spanId: newSpanId(),
          sampled: parent.sampled,
          ...(parent.tracestate ? { tracestate: parent.tracestate } : {}),
        }
      : { traceId: newTraceId(), spanId: newSpanId(), sampled: false };
  }

  child(): Span {
    return new IdSpan(this.context);
  }
  setAttributes(): void {}
  fail(): void {}
  end(): void {}
}

/** The tracer while export is off: ids, no SDK, nothing recorded. */
export const ID_ONLY_TRACER: Tracer = {
  exporting: false,
  startSpan: (_name, _kind, parent) => new IdSpan(parent),
  shutdown: async () => undefined,
};

/**
 * The tracer the configuration asks for: with no OTLP endpoint, ID_ONLY_TRACER and no OpenTelemetry
 * module loaded at all; with one, the OpenTelemetry SDK (loaded here, on demand) exporting to it.
 */
export async function createTracer(config: TracingConfig, logger: Logger): Promise<Tracer> {
  if (!config.endpoint) return ID_ONLY_TRACER;
  const { OtelTracer } = await import('./otel-tracer.js');
  return new OtelTracer({ ...config, endpoint: config.endpoint }, logger);
}
