import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { Agent } from './undici-parts.js';
import { DeadlineSignal } from './deadline-signal.js';
import { currentRequestId } from '#src/platform/logging/request-context.js';
import { traceHeaders } from './call-trace.js';
import { encodeForm } from './form-encoding.js';
import { dispatchRequest, type DispatchedAnswer } from './answer-handler.js';
import { AnswerHeaders, ReceivedAnswer } from './received-answer.js';
import { toUpstreamError, UpstreamError } from './upstream-errors.js';

/** The request's id for the provider (X-Request-ID): the facade request's own, or a new one. */
export function requestIdHeader(): { 'X-Request-ID': string } {
  return { 'X-Request-ID': currentRequestId() ?? randomUUID() };
}

export interface TlsSource {
  /** The TLS material to use for new connections; `version` changes when it was renewed. */
  current(): { cert?: Buffer; key?: Buffer; passphrase?: string; ca: Buffer; version: number };
}

/**
 * A request as openapi-fetch builds it for this transport (its `Request` option): the method, the
 * URL, the headers, the serialised body and the deadline's signal (the call's `deadline` option, or
 * a `signal`), without the WHATWG Request's stream and signal machinery, which the dispatcher does
 * not need.
 */
export class OutgoingRequest {
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | Uint8Array | undefined;
  readonly signal: AbortSignal | DeadlineSignal | undefined;

  constructor(
    readonly url: string,
    init: RequestInit & { deadline?: DeadlineSignal } = {},
  ) {
    this.method = (init.method ?? 'GET').toUpperCase();
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array))
      throw new TypeError('an upstream request body is a string or bytes');
    this.body = body;
    this.signal = init.deadline ?? init.signal ?? undefined;
  }
}

export interface UpstreamTransportOptions {
  /** Name used in errors and logs: `open-banking`, `card`. */
  name: string;
  baseUrl: string;
  tls: TlsSource;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  poolConnections: number;
  keepAliveTimeoutMs: number;
  /** HTTP Basic credentials sent on every call (the card API authenticates with its secret key this way). */
  basicAuth?: { username: string; password: string };
}

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string | undefined>;
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded with bracket notation. */
  form?: Record<string, unknown>;
}

export interface UpstreamResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T | undefined;
}

/**
 * One upstream API behind a keep-alive pool of TLS connections (undici). It presents the client
 * certificate when the TLS source has one, verifies the server against the configured CAs, speaks
 * TLS 1.2 or newer, forwards X-Request-ID and the trace (traceparent, tracestate), and turns transport
 * failures into UpstreamError.
 * A renewed certificate takes effect for new connections: the pool is replaced, the old one drains.
 */
export class UpstreamTransport {
  private agent: Agent;
  private agentVersion: number;

  private readonly authorization?: string;

  constructor(readonly options: UpstreamTransportOptions) {
    if (options.basicAuth)
      this.authorization = `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64')}`;
    const material = options.tls.current();
    this.agent = this.createAgent(material);
    this.agentVersion = material.version;
  }

  /** The dispatcher for the next request; replaced when the TLS material changed on disk. */
  dispatcher(): Dispatcher {
    const material = this.options.tls.current();
    if (material.version !== this.agentVersion) {
      const previous = this.agent;
      this.agent = this.createAgent(material);
      this.agentVersion = material.version;
      void previous.close().catch(() => undefined);
    }
    return this.agent;
  }

  /**
   * A fetch for typed clients (openapi-fetch) over this pool: the request is sent with undici's
   * dispatcher (lighter than its WHATWG fetch; redirects are answers, never followed), and answered
   * as a ReceivedAnswer whose body the caller takes when it reads it (`text()`: the contract check),
   * so a body that breaks off or stalls fails there.
   */
  readonly fetch = async (request: Request): Promise<Response> => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    headers['x-request-id'] ??= requestIdHeader()['X-Request-ID'];
    Object.assign(
      headers,
      traceHeaders(request.signal instanceof DeadlineSignal ? request.signal.span : undefined),
    );
    if (this.authorization) headers.authorization = this.authorization;
    const url = new URL(request.url);
    let answer: DispatchedAnswer;
    try {
      const body =
        request instanceof OutgoingRequest
          ? request.body
          : request.body
            ? Buffer.from(await request.arrayBuffer())
            : undefined;
      answer = await dispatchRequest(
        this.dispatcher(),
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: request.method as Dispatcher.HttpMethod,
          headers,
          body,
        },
        request.signal as Parameters<typeof dispatchRequest>[2],
      );
    } catch (error) {
      throw toUpstreamError(this.options.name, error);
    }
    return new ReceivedAnswer(answer.statusCode, answer.headers, answer.text).asResponse();
  };

  /** What typed clients build for each call: only what `fetch` reads. */
  readonly Request = OutgoingRequest as unknown as typeof Request;

  async send<T = unknown>(request: UpstreamRequest): Promise<UpstreamResponse<T>> {
    const url = new URL(request.path.replace(/^\//, ''), `${this.options.baseUrl}/`);
    for (const [key, value] of Object.entries(request.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-request-id': requestIdHeader()['X-Request-ID'],
      ...traceHeaders(),
    };
    if (this.authorization) headers.authorization = this.authorization;
    for (const [key, value] of Object.entries(request.headers ?? {}))
      if (value !== undefined) headers[key.toLowerCase()] = value;
    let body: string | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = encodeForm(request.form);
    }
    let response: Dispatcher.ResponseData;
    try {
      response = await this.dispatcher().request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        body,
      });
    } catch (error) {
      throw toUpstreamError(this.options.name, error);
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw toUpstreamError(this.options.name, error);
    }
    const responseHeaders = Object.fromEntries(new AnswerHeaders(response.headers));
    return {
      status: response.statusCode,
      headers: responseHeaders,
      body: this.parseBody<T>(text, responseHeaders['content-type']),
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Ends every connection now, requests in flight included (calls held for minutes: the POS interface). */
  async destroy(): Promise<void> {
    await this.agent.destroy();
  }

  private parseBody<T>(text: string, contentType: string | undefined): T | undefined {
    if (text === '') return undefined;
    if (!contentType || !/[/+]json\b/.test(contentType)) return text as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new UpstreamError(
        this.options.name,
        'bad-response',
        `answered ${contentType} that is not JSON`,
      );
    }
  }

  private createAgent(material: ReturnType<TlsSource['current']>): Agent {
    const {
      connectTimeoutMs,
      headersTimeoutMs,
      bodyTimeoutMs,
      poolConnections,
      keepAliveTimeoutMs,
    } = this.options;
    return new Agent({
      connect: {
        cert: material.cert,
        key: material.key,
        passphrase: material.passphrase,
        ca: material.ca,
        minVersion: 'TLSv1.2',
        rejectUnauthorized: true,
        timeout: connectTimeoutMs,
      },
      connections: poolConnections,
      headersTimeout: headersTimeoutMs,
      bodyTimeout: bodyTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      keepAliveMaxTimeout: Math.max(keepAliveTimeoutMs, 60_000),
    });
  }
}
