// Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (createTracer): with export off, no OpenTelemetry
// module is in the process.
import {
  createTraceState,
  ROOT_CONTEXT,
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  trace,
  type Span as OtelSpan,
  type Tracer as OtelApiTracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { withinMs } from '../common/time-limit.js';
import type { TraceSampler, TracingConfig } from '../config/app-config.js';
import type { SpanContext } from './trace-context.js';
import type { Span, SpanAttributes, SpanKind, Tracer } from './tracer.js';

const KINDS: Record<SpanKind, OtelSpanKind> = {
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
  internal: OtelSpanKind.INTERNAL,
};

/** A failed export is logged at most this often (a collector that is down fails every batch). */
const EXPORT_FAILURE_LOG_MS = 60_000;
/** The longest shutdown waits for the last export: a collector that hangs must not hold the process. */
const SHUTDOWN_EXPORT_MS = 3000;

function samplerOf(name: TraceSampler, ratio: number): Sampler {
  const root = name.endsWith('always_on')
    ? new AlwaysOnSampler()
    : name.endsWith('always_off')
      ? new AlwaysOffSampler()
      : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** The OTLP exporter, saying in the log when the collector cannot be reached (the SDK would be silent). */
function reportingExporter(inner: SpanExporter, logger: Logger): SpanExporter {
  let lastReport = 0;
  return {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        if (result.code !== 0 && Date.now() - lastReport >= EXPORT_FAILURE_LOG_MS) {
          lastReport = Date.now();
          logger.warn(
            { spans: spans.length, reason: result.error?.message },
            'trace export failed; spans dropped',
          );
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

class SdkSpan implements Span {
  readonly context: SpanContext;
  readonly recording: boolean;

  constructor(
    private readonly tracer: OtelTracer,
    readonly inner: OtelSpan,
  ) {
    const { traceId, spanId, traceFlags, traceState } = inner.spanContext();
    const tracestate = traceState?.serialize();
    this.context = {
      traceId,
      spanId,
      sampled: (traceFlags & 1) === 1,
      ...(tracestate ? { tracestate } : {}),
    };
    this.recording = inner.isRecording();
  }

  child(name: string, kind: SpanKind, attributes?: SpanAttributes): Span {
    return this.tracer.startUnder(name, kind, trace.setSpan(ROOT_CONTEXT, this.inner), attributes);
  }

  setAttributes(attributes: SpanAttributes): void {
    this.inner.setAttributes(attributes);
  }

  fail(errorType: string): void {
    this.inner.setAttribute('error.type', errorType);
    this.inner.setStatus({ code: SpanStatusCode.ERROR });
  }

  end(): void {
    this.inner.end();
  }
}

/**
 * Spans made by the OpenTelemetry SDK and exported in batches by OTLP/HTTP (JSON). Nothing is registered
 * globally: each gateway holds its own provider, and parents are passed explicitly (the request's
 * context carries its span), so no context manager patches the process.
 */
export class OtelTracer implements Tracer {
  readonly exporting = true;
  private readonly provider: TracerProvider;
  private readonly tracer: OtelApiTracer;

  constructor(
    config: TracingConfig & { endpoint: string },
    private readonly logger: Logger,
  ) {
    const exporter = new OTLPTraceExporter({
      url: `${config.endpoint}/v1/traces`,
      headers: config.headers,
    });
    this.provider = new TracerProvider({
      resource: defaultResource().merge(
        resourceFromAttributes({ 'service.name': config.serviceName }),
      ),
      sampler: samplerOf(config.sampler, config.samplerRatio),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: reportingExporter(exporter, logger),
          scheduledDelayMillis: config.exportDelayMs,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('portico');
  }

  startSpan(
    name: string,
    kind: SpanKind,
    parent: SpanContext | undefined,
    attributes?: SpanAttributes,
  ): Span {
    const context = parent
      ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId: parent.traceId,
          spanId: parent.spanId,
          traceFlags: parent.sampled ? 1 : 0,
          isRemote: true,
          ...(parent.tracestate ? { traceState: createTraceState(parent.tracestate) } : {}),
        })
      : ROOT_CONTEXT;
    return this.startUnder(name, kind, context, attributes);
  }

  startUnder(
    name: string,
    kind: SpanKind,
    context: typeof ROOT_CONTEXT,
    attributes?: SpanAttributes,
  ): Span {
    return new SdkSpan(
      this,
      this.tracer.startSpan(name, { kind: KINDS[kind], attributes }, context),
    );
  }

  async shutdown(): Promise<void> {
    await withinMs(this.provider.shutdown(), SHUTDOWN_EXPORT_MS).catch((error: unknown) =>
      this.logger.warn({ err: error }, 'trace export at shutdown did not finish; spans dropped'),
    );
  }
}
