import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { eventually } from './chaos.js';

/** A span as a collector receives it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, string | number | boolean>;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
};
type OtlpAttribute = { key: string; value: OtlpValue };

const plain = (value: OtlpValue) =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue ??
  '';

const attributesOf = (list: OtlpAttribute[] = []) =>
  Object.fromEntries(list.map((attribute) => [attribute.key, plain(attribute.value)]));

/**
 * A collector's OTLP/HTTP endpoint for traces (`POST /v1/traces`, the JSON encoding), a plain node http
 * server started by the test: what it receives is decoded into `spans`.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests received, with their headers. */
  readonly requests: { path: string; headers: Record<string, unknown> }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const holder: { receiver?: OtlpReceiver } = {};
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        holder.receiver?.receive(request.url ?? '', request.headers, Buffer.concat(chunks));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as { port: number };
    holder.receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return holder.receiver;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /** Waits until the trace holds a span matching `match` (spans are exported in batches), and returns it. */
  async span(
    traceId: string,
    match: (span: ReceivedSpan) => boolean,
    what = 'a span',
  ): Promise<ReceivedSpan> {
    await eventually(async () => this.trace(traceId).some(match), 10_000, what, 20);
    return this.trace(traceId).find(match)!;
  }

  close(): Promise<void> {
    return new Promise((closed) => this.server.close(() => closed()));
  }

  private receive(path: string, headers: Record<string, unknown>, body: Buffer): void {
    this.requests.push({ path, headers });
    const text = (headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString();
    const payload = JSON.parse(text) as {
      resourceSpans: {
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans: {
          spans: {
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            name: string;
            kind: number;
            attributes?: OtlpAttribute[];
            status?: { code?: number };
          }[];
        }[];
      }[];
    };
    for (const resourceSpans of payload.resourceSpans) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans)
        for (const span of scope.spans)
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            statusCode: span.status?.code ?? 0,
            resource,
          });
    }
  }
}
