import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { Agent } from './undici-parts.js';
import type { DeadlineSignal } from './deadline-signal.js';
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

/** One request of a typed client: the path below the base URL's origin, headers in lower case. */
export interface DispatchedCall {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The seam's deadline: ends the call, and carries its span to the traceparent. */
  signal?: DeadlineSignal;
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
  /** The base URL's origin, where every request goes. */
  readonly origin: string;
  /** The base URL's path (no trailing slash), which every typed path is below. */
  readonly basePath: string;

  constructor(readonly options: UpstreamTransportOptions) {
    if (options.basicAuth)
      this.authorization = `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64')}`;
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
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
   * Sends a typed client's request over this pool with undici's dispatcher (redirects are answers,
   * never followed), adding X-Request-ID when the call has none, the trace and the Basic credentials;
   * answers at the headers with a ReceivedAnswer whose body the caller takes when it reads it (`text()`:
   * the contract check), so a body that breaks off or stalls fails there.
   */
  async dispatch(call: DispatchedCall): Promise<ReceivedAnswer> {
    const headers = call.headers;
    headers['x-request-id'] ??= requestIdHeader()['X-Request-ID'];
    Object.assign(headers, traceHeaders(call.signal?.span));
    if (this.authorization) headers.authorization = this.authorization;
    let answer: DispatchedAnswer;
    try {
      answer = await dispatchRequest(
        this.dispatcher(),
        {
          origin: this.origin,
          path: call.path,
          method: call.method as Dispatcher.HttpMethod,
          headers,
          body: call.body,
        },
        call.signal,
      );
    } catch (error) {
      throw toUpstreamError(this.options.name, error);
    }
    return new ReceivedAnswer(answer.statusCode, answer.headers, answer.text);
  }

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
