import type { Logger } from 'pino';
import { ProblemException } from '#src/platform/errors/problem.js';
import { requestContext } from '#src/platform/logging/request-context.js';
import { ID_ONLY_TRACER, type Span, type Tracer } from '#src/platform/tracing/tracer.js';
import { DeadlineSignal } from './deadline-signal.js';
import { CircuitBreakers, type BreakerPolicy, type BreakerState } from './circuit-breaker.js';
import { UPSTREAM_PROBLEM_TYPES } from '#src/platform/errors/upstream-problems.js';
import { toUpstreamError, UpstreamError } from './upstream-errors.js';

/** One message of a provider's error body, whatever its format (Berlin Group tppMessages, card API error). */
export interface UpstreamMessage {
  code: string;
  text?: string;
  /** The field the provider names, when it names one. */
  path?: string;
}

/** What an upstream brings to the seam besides its client: its name and the parser of its error bodies. */
export interface UpstreamProfile {
  /** `open-banking`, `card`: in metrics, logs and problems. */
  name: string;
  /** How facade messages call the provider: "the bank". */
  displayName: string;
  parseErrorBody(body: unknown): UpstreamMessage[];
}

export interface UpstreamPolicy {
  /** The whole time one facade request may spend on this upstream, retries included (the read deadline). */
  deadlineMs: number;
  /**
   * Operations the provider holds open longer (a POS payment, while the payer decides), with their own
   * deadline from the call's start; they neither take nor spend the request's deadline.
   */
  operationDeadlinesMs?: Readonly<Record<string, number>>;
  /** Pauses before each retry of a safe read; its length is the number of retries. */
  retryDelaysMs: number[];
  breaker: BreakerPolicy;
}

/** Where the seam reports what it sees (prom-client metrics in the gateway). */
export interface UpstreamObserver {
  recordUpstreamCall(upstream: string, operation: string, outcome: string, seconds: number): void;
  setBreakerState(upstream: string, key: string, state: BreakerState): void;
}

export interface UpstreamAnswer<T> {
  status: number;
  data?: T;
  /** The answer's headers, names in lower case (`location`, `aspsp-sca-approach`). */
  headers: Record<string, string>;
  /** The provider's error messages on 4xx. */
  messages: UpstreamMessage[];
  latencyMs: number;
}

export interface UpstreamCall {
  /** The upstream operationId, for logs, metrics and problems. */
  operation: string;
  /** A read that changes nothing at the provider: retried on failure within the deadline. */
  safe: boolean;
  /** The circuit this call belongs to besides the upstream's own (a brand, a merchant). */
  breakerKey?: string;
}

/**
 * Whether a failed write may have reached the provider, so that its outcome is unknown: a 5xx from the
 * seam other than one that certainly sent nothing (refused, TLS, connect timeout, open circuit).
 */
export function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof ProblemException) || error.init.status < 500) return false;
  const upstream = error.init.extensions?.upstream as { sent?: boolean } | undefined;
  return upstream !== undefined && upstream.sent !== false;
}

/**
 * How a failed call ends in the access log: `unknown:<status>` when the provider may have acted and
 * nothing came back (timeout, broken connection), `failed:bad-response` when it answered something
 * unusable, `failed:<status>` when it certainly did not act (not sent, or a 5xx answer).
 */
export function failureOutcome(error: unknown): string {
  const init = (error as ProblemException).init;
  const upstream = init?.extensions?.upstream as { failure?: string; status?: number } | undefined;
  if (upstream?.failure === 'bad-response') return 'failed:bad-response';
  const unknown = upstream?.status === undefined && outcomeUnknown(error);
  return `${unknown ? 'unknown' : 'failed'}:${init?.status ?? 'error'}`;
}

/**
 * The seam's failure, restated for a write whose outcome is unknown: same status (502/504), with
 * `outcome: "unknown"` and where the app can follow the resource while Portico settles it.
 */
export function inDoubtProblem(
  error: ProblemException,
  resource: Record<string, string>,
): ProblemException {
  return new ProblemException({
    ...error.init,
    detail: `${error.init.detail ?? ''}. The request may have reached the provider: its outcome is unknown. Portico settles it with the provider; follow ${resource.resource} and do not send it again (a retry with the same Idempotency-Key answers this).`,
    extensions: { ...error.init.extensions, outcome: 'unknown', ...resource },
  });
}

/**
 * A typed-client call (typed-client.ts) given the signal that ends it at the deadline (its `deadline`
 * option). `response` is the transport's ReceivedAnswer, which the call types give as a Response: the
 * seam reads its `status` and `headers` only.
 */
export type SendCall<T> = (
  deadline: DeadlineSignal,
) => Promise<{ data?: T; error?: unknown; response: Response }>;

const capitalised = (text: string) => `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `send` with a signal that aborts (TimeoutError) after `ms` and carries the call's span; its timer
 * is cleared as soon as the call settles (AbortSignal.timeout's would stay armed until it fires, one
 * per call).
 */
async function withDeadline<T>(
  ms: number,
  span: Span,
  send: (signal: DeadlineSignal) => Promise<T>,
): Promise<T> {
  const signal = new DeadlineSignal(span);
  const timer = setTimeout(
    () => signal.abort(new DOMException('The deadline passed', 'TimeoutError')),
    ms,
  );
  try {
    return await send(signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A provider call's outcome class, as its span tells it: `ok` (answered, done), `failed` (refused, a 5xx
 * answer, or certainly not sent), `unknown` (a write that may have reached the provider, no answer).
 */
function outcomeClass(error: unknown): string {
  return failureOutcome(error).split(':')[0];
}

/**
 * The one seam every upstream call goes through: an overall deadline per facade request (retries
 * inside it), retries for safe reads only, a circuit breaker per upstream and key, and the single
 * mapping of failures to 502/503/504 problem+json. A 4xx is returned for the caller to interpret
 * (with `refusal` to pass it on). Each call is a span (its retries included), the parent named in the
 * traceparent its requests carry.
 */
export class UpstreamCaller {
  private readonly breakers: CircuitBreakers;

  constructor(
    readonly profile: UpstreamProfile,
    private readonly policy: UpstreamPolicy,
    private readonly logger: Logger,
    private readonly observer?: UpstreamObserver,
    /** Where a call made outside a facade request starts its trace. */
    private readonly tracer: Tracer = ID_ONLY_TRACER,
  ) {
    this.breakers = new CircuitBreakers(policy.breaker, (key, state) => {
      this.logger.warn({ upstream: profile.name, key, state }, 'upstream circuit changed');
      this.observer?.setBreakerState(profile.name, key, state);
    });
  }

  async call<T>(call: UpstreamCall, send: SendCall<T>): Promise<UpstreamAnswer<T>> {
    const span = this.startSpan(call);
    try {
      const answer = await this.attempts(call, send, span);
      if (span.recording) {
        span.setAttributes({
          'http.response.status_code': answer.status,
          'portico.upstream.outcome': answer.status < 400 ? 'ok' : 'failed',
        });
        if (answer.status >= 400) span.fail(String(answer.status));
      }
      return answer;
    } catch (error) {
      if (span.recording) {
        const upstream = (error as ProblemException).init?.extensions?.upstream as
          { status?: number; failure?: string } | undefined;
        span.setAttributes({
          'http.response.status_code': upstream?.status,
          'portico.upstream.outcome': outcomeClass(error),
        });
        span.fail(upstream?.failure ?? String(upstream?.status ?? 'error'));
      }
      throw error;
    } finally {
      span.end();
    }
  }

  /** The call's span: under the facade request's, or the first of a trace (background work). */
  private startSpan(call: UpstreamCall): Span {
    const name = `${this.profile.name} ${call.operation}`;
    const parent = requestContext.getStore()?.span;
    const attributes =
      (parent?.recording ?? this.tracer.exporting)
        ? {
            'portico.upstream': this.profile.name,
            'portico.upstream.operation': call.operation,
            'portico.upstream.safe': call.safe,
          }
        : undefined;
    return parent
      ? parent.child(name, 'client', attributes)
      : this.tracer.startSpan(name, 'client', undefined, attributes);
  }

  private async attempts<T>(
    call: UpstreamCall,
    send: SendCall<T>,
    span: Span,
  ): Promise<UpstreamAnswer<T>> {
    const started = performance.now();
    const deadline = this.deadline(call.operation);
    const key = call.breakerKey ?? '*';
    const attempts = call.safe ? this.policy.retryDelaysMs.length + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      const remaining = deadline - Date.now();
      const wait = this.breakers.admit(key);
      if (wait > 0) throw this.unavailable(call, wait);
      if (span.recording) span.setAttributes({ 'portico.upstream.attempts': attempt });
      let outcome = 'ok';
      try {
        if (remaining <= 0)
          throw new UpstreamError(this.profile.name, 'timeout', 'deadline passed');
        const { data, error, response } = await withDeadline(remaining, span, send);
        const retry = response.status >= 500 && attempt < attempts;
        outcome = response.status >= 500 ? `status:${response.status}` : 'ok';
        if (response.status >= 500) this.breakers.failed(key);
        else this.breakers.succeeded(key);
        this.observe(call, outcome, started);
        if (retry && (await this.pause(call, attempt, deadline, `status ${response.status}`)))
          continue;
        const messages = this.profile.parseErrorBody(error).slice(0, 20);
        if (response.status >= 500) throw this.badGateway(call, response.status, messages);
        return {
          status: response.status,
          data,
          headers: Object.fromEntries(response.headers),
          messages,
          latencyMs: Math.round(performance.now() - started),
        };
      } catch (thrown) {
        if (thrown instanceof ProblemException) throw thrown;
        const failure = toUpstreamError(this.profile.name, thrown);
        this.breakers.failed(key);
        this.observe(call, failure.kind, started);
        const retryable = call.safe && attempt < attempts && failure.kind !== 'bad-response';
        if (retryable && (await this.pause(call, attempt, deadline, failure.kind))) continue;
        throw this.failureProblem(call, failure);
      }
    }
  }

  /**
   * A 4xx the provider gave, passed on to the app with its status, the provider's code and, on a 429
   * or 503, the provider's Retry-After.
   */
  refusal(operation: string, answer: UpstreamAnswer<unknown>): ProblemException {
    const [first] = answer.messages;
    const { displayName } = this.profile;
    const retryAfter = answer.headers['retry-after'];
    return new ProblemException({
      status: answer.status,
      ...(retryAfter ? { headers: { 'Retry-After': retryAfter } } : {}),
      type: UPSTREAM_PROBLEM_TYPES.refused,
      title: 'Refused by the provider',
      detail: first
        ? `${operation}: ${first.code}${first.text ? `: ${first.text}` : ''}`
        : `${operation}: ${displayName} answered ${answer.status}`,
      extensions: {
        upstream: {
          status: answer.status,
          code: first?.code,
          text: first?.text,
          path: first?.path,
        },
      },
    });
  }

  /** How long a call of this operation may take: its own deadline, or the read deadline. */
  deadlineMsOf(operation: string): number {
    return this.policy.operationDeadlinesMs?.[operation] ?? this.policy.deadlineMs;
  }

  /**
   * The end of this call's time with the upstream: an operation with a deadline of its own counts from
   * its start; any other shares the facade request's deadline, set by the first of them.
   */
  private deadline(operation: string): number {
    const own = this.policy.operationDeadlinesMs?.[operation];
    if (own !== undefined) return Date.now() + own;
    const context = requestContext.getStore();
    const fresh = Date.now() + this.policy.deadlineMs;
    if (!context) return fresh;
    context.upstreamDeadline ??= fresh;
    return context.upstreamDeadline;
  }

  /** Waits before a retry when the deadline leaves room for it; false when it does not. */
  private async pause(
    call: UpstreamCall,
    attempt: number,
    deadline: number,
    reason: string,
  ): Promise<boolean> {
    const delay = this.policy.retryDelaysMs[attempt - 1];
    if (Date.now() + delay >= deadline) return false;
    this.logger.warn(
      { operation: call.operation, reason, attempt },
      'upstream call failed; retrying',
    );
    await sleep(delay);
    return true;
  }

  private observe(call: UpstreamCall, outcome: string, started: number): void {
    const seconds = (performance.now() - started) / 1000;
    this.observer?.recordUpstreamCall(this.profile.name, call.operation, outcome, seconds);
  }

  private badGateway(call: UpstreamCall, status: number, messages: UpstreamMessage[]) {
    return new ProblemException({
      status: 502,
      type: UPSTREAM_PROBLEM_TYPES.badGateway,
      title: 'Bad Gateway',
      detail: `${capitalised(this.profile.displayName)} answered ${status} to ${call.operation}`,
      extensions: { upstream: { status, code: messages[0]?.code } },
    });
  }

  private unavailable(call: UpstreamCall, waitMs: number) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new ProblemException({
      status: 503,
      type: UPSTREAM_PROBLEM_TYPES.unavailable,
      title: 'Service Unavailable',
      detail: `${capitalised(this.profile.displayName)} is failing; ${call.operation} was not sent (circuit open)`,
      headers: { 'Retry-After': String(seconds) },
      extensions: { upstream: { failure: 'circuit-open', sent: false } },
    });
  }

  private failureProblem(call: UpstreamCall, failure: UpstreamError): ProblemException {
    const timeout = failure.kind === 'timeout';
    const { displayName } = this.profile;
    this.logger.warn(
      { operation: call.operation, kind: failure.kind, err: failure },
      'upstream call failed',
    );
    return new ProblemException({
      status: timeout ? 504 : 502,
      type: timeout ? UPSTREAM_PROBLEM_TYPES.timeout : UPSTREAM_PROBLEM_TYPES.badGateway,
      title: timeout ? 'Gateway Timeout' : 'Bad Gateway',
      detail: timeout
        ? `${capitalised(displayName)} did not answer ${call.operation} in time`
        : failure.kind === 'bad-response'
          ? `${capitalised(displayName)} answered ${call.operation} with something unusable`
          : `${capitalised(displayName)} could not be reached for ${call.operation} (${failure.kind})`,
      extensions: {
        upstream: { failure: failure.kind, ...(failure.notSent ? { sent: false } : {}) },
      },
    });
  }
}
