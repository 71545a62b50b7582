import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import { PROBLEM_TYPES, ProblemException, type ProblemInit } from '../errors/problem.js';
import { toProblem } from '../errors/to-problem.js';
import { LOGGER } from '../logging/logging.module.js';
import { requestContext } from '../logging/request-context.js';
import { requestFingerprint } from './fingerprint.js';
import { READ_BACK_KEY } from './read-back.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  inProgressProblem,
  boundProblem,
  keyReusedProblem,
  readIdempotencyKey,
  storeUnavailableProblem,
} from './idempotency-problems.js';
import { IdempotencyStore, type ClaimOutcome, type StoredResponse } from './idempotency.store.js';
import { BoundResources, type BoundResourceState } from './bound-resources.js';
import type { IdempotencyClaim } from './idempotency-binding.js';

/** The request as the API-key guard leaves it: all this layer reads of the caller is its tenant. */
type AuthenticatedRequest = FastifyRequest & { principal?: { tenantId: string } };

/**
 * Headers that describe this exchange rather than the operation's result, so are not replayed: the
 * replay gets its own request id and rate-limit state, and Fastify recomputes framing headers.
 */
const NOT_REPLAYED = new Set([
  'x-request-id',
  'retry-after',
  'connection',
  'keep-alive',
  'date',
  'content-length',
  'transfer-encoding',
  'set-cookie',
  'idempotent-replayed',
]);

function replayableHeaders(headers: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || NOT_REPLAYED.has(lower) || lower.startsWith('ratelimit-')) continue;
    kept[lower] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return kept;
}

/** A problem as the client saw it, minus what belongs to one exchange (instance, request id). */
function storedProblem(problem: ProblemInit): StoredResponse {
  const body = {
    type: problem.type ?? 'about:blank',
    title: problem.title,
    status: problem.status,
    ...(problem.detail !== undefined ? { detail: problem.detail } : {}),
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...problem.extensions,
  };
  return { status: problem.status, body, headers: replayableHeaders(problem.headers ?? {}) };
}

/** A stored problem's own members (ids, `outcome`, `resource`), to carry into a fresher answer. */
function storedExtensions(response: StoredResponse): Record<string, unknown> {
  const {
    type: _type,
    title: _title,
    status: _status,
    detail: _detail,
    errors: _errors,
    ...extensions
  } = (response.body ?? {}) as Record<string, unknown>;
  return extensions;
}

/** Problems that mean the request was refused as sent (its body, path or query), before it ran. */
const UNRUN_TYPES: ReadonlySet<string> = new Set([
  PROBLEM_TYPES.validation,
  PROBLEM_TYPES.malformedBody,
  PROBLEM_TYPES.malformedRequest,
  PROBLEM_TYPES.unsupportedMediaType,
]);

const refusedUnrun = (problem: ProblemInit): boolean =>
  (problem.status === 400 || problem.status === 415) && UNRUN_TYPES.has(problem.type ?? '');

function asReplayed(problem: ProblemException): ProblemException {
  return new ProblemException({
    ...problem.init,
    headers: { ...problem.init.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
  });
}

/** Rebuilds a stored problem so that the filter renders it as it does every error (with this request's id). */
function replayedProblem(response: StoredResponse): ProblemException {
  const {
    type,
    title,
    status: _status,
    detail,
    errors,
    ...extensions
  } = (response.body ?? {}) as Record<string, unknown> & Partial<ProblemInit>;
  return new ProblemException({
    status: response.status,
    type,
    title,
    detail,
    errors,
    extensions,
    headers: { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
  });
}

/**
 * Makes a POST safe to retry with `Idempotency-Key` (apply it with @Idempotent()). The first request with a
 * key claims it and runs; its answer (success or a 4xx problem) is stored and replayed to repeats of the same
 * request for 24 hours, but for a request refused by validation (400) before it wrote anything: that one
 * keeps nothing, so that it can be corrected and sent again under the same key. Once the request has written its resource (bindIdempotentResource) the key is bound
 * to it: it is never run again, and a repeat whose stored answer may be stale (outcome unknown, 202, or none
 * after a crash) answers the resource as its capability reads it now (BoundResources): settled, its body;
 * still in doubt, 409 with Retry-After. A 5xx before that forgets the key, so the client may retry it. If the store
 * cannot be reached the handler does not run (503): running it unprotected could do the operation twice.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly resources: BoundResources,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    const key = readIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]);
    if (key === undefined) return next.handle();
    const tenantId = request.principal?.tenantId;
    // Guards run before interceptors: without a principal the route lacks @Auth(), a programming error.
    if (!tenantId)
      throw new Error('@Idempotent() needs @Auth() on the same route: keys are scoped by tenant');
    const readBack = Reflect.getMetadata(READ_BACK_KEY, context.getHandler()) === true;
    return defer(() =>
      this.run(request, http.getResponse<FastifyReply>(), tenantId, key, next, readBack),
    );
  }

  private async run(
    request: AuthenticatedRequest,
    reply: FastifyReply,
    tenantId: string,
    key: string,
    next: CallHandler,
    readBack: boolean,
  ): Promise<unknown> {
    const template = request.routeOptions.url ?? request.url.split('?')[0];
    const route = `${request.method} ${template}`;
    // The raw body and path parameters: pipes run later, inside next.handle().
    const fingerprint = requestFingerprint({
      method: request.method,
      route: template,
      params: request.params,
      body: request.body,
    });

    let claim;
    try {
      claim = await this.store.claim(tenantId, key, route, fingerprint);
    } catch (error) {
      this.logger.error({ err: error }, 'idempotency store unavailable: request refused');
      throw storeUnavailableProblem();
    }
    if (claim.outcome === 'mismatch') throw keyReusedProblem(claim.route, route);
    if (claim.outcome !== 'claimed') return this.repeat(claim, tenantId, reply, readBack);

    const { lease } = claim;
    const store = this.store;
    // Bound by its own statement (bind) or by the statement that writes the resource (idempotentBindCte).
    const held: IdempotencyClaim = {
      tenantId,
      key,
      lease,
      async bind(resource) {
        if (this.boundTo === resource) return;
        await store.bind(tenantId, key, lease, resource);
        this.boundTo = resource;
      },
    };
    const context = requestContext.getStore();
    if (context) context.idempotency = held;
    let result: unknown;
    try {
      result = await lastValueFrom(next.handle(), { defaultValue: undefined });
    } catch (error) {
      const problem = toProblem(error);
      // A client error is the operation's answer, replayed like a success (as Stripe does). A server
      // error after the request wrote its resource may have reached the provider: the key stays
      // bound and the answer (outcome unknown) is replayed, never run again. A server error before
      // that, or one that certainly sent nothing, frees the key for a retry.
      const notSent =
        (problem?.extensions?.upstream as { sent?: boolean } | undefined)?.sent === false;
      const bound = held.boundTo !== undefined;
      // A request refused by validation before it wrote anything did not execute: nothing is kept, and
      // the corrected request may be sent under the same key (as Stripe does).
      if (problem && !bound && refusedUnrun(problem)) await this.forget(tenantId, key, lease);
      else if (problem && (problem.status < 500 || (bound && !notSent)))
        await this.finish(held, storedProblem(problem));
      else await this.forget(tenantId, key, lease);
      throw error;
    }
    // Nest set the route's status (and @Header()s) before the interceptors; the handler may have changed them.
    await this.finish(held, {
      status: reply.statusCode,
      body: readBack && held.boundTo !== undefined ? undefined : result,
      headers: replayableHeaders(reply.getHeaders()),
    });
    return result;
  }

  /**
   * A repeat of a request that has run or is running. An answer that may be stale (outcome unknown, not
   * decided yet, or none: a crash) gives way to the bound resource as it stands now: settled, it is the
   * answer; still in doubt, 409 with Retry-After. Success and client errors replay as stored.
   */
  private async repeat(
    claim: Exclude<ClaimOutcome, { outcome: 'claimed' | 'mismatch' }>,
    tenantId: string,
    reply: FastifyReply,
    readBack: boolean,
  ): Promise<unknown> {
    const stored = claim.outcome === 'completed' ? claim.response : undefined;
    const stale =
      !stored ||
      stored.status >= 500 ||
      stored.status === 202 ||
      (readBack && stored.body === undefined);
    const resource = claim.resource;
    const now = resource && stale ? await this.current(tenantId, resource) : undefined;
    if (now?.state === 'settled') {
      reply
        .status(now.status ?? reply.statusCode)
        .headers({ ...now.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' });
      return now.body;
    }
    if (now?.state === 'failed') throw asReplayed(now.problem);
    if (claim.outcome === 'in-progress') throw inProgressProblem();
    if (claim.outcome === 'bound') throw boundProblem(claim.resource);
    const response = claim.response;
    if (now?.state === 'in-doubt' && response.status >= 500)
      throw asReplayed(boundProblem(resource as string, storedExtensions(response)));
    if (response.status >= 400) throw replayedProblem(response);
    reply
      .status(response.status)
      .headers({ ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' });
    return response.body;
  }

  /** The bound resource as its capability reads it; undefined (the stored answer stands) when unread. */
  private async current(
    tenantId: string,
    resource: string,
  ): Promise<BoundResourceState | undefined> {
    try {
      return await this.resources.read(tenantId, resource);
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the resource bound to an idempotency key failed');
      return undefined;
    }
  }

  /**
   * The operation has run: its answer goes to the client even if it cannot be stored, since a 503 would
   * invite a retry that does it again. The record stays in progress (409 to repeats) until the lock times out.
   */
  private async finish(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    const { tenantId, key, lease, boundTo } = claim;
    try {
      if (!(await this.store.complete(tenantId, key, lease, response, boundTo !== undefined))) {
        this.logger.warn(
          { status: response.status },
          'idempotency record was taken over before the request finished; answer not stored',
        );
      }
    } catch (error) {
      this.logger.error(
        { err: error, status: response.status },
        'storing the idempotent answer failed',
      );
    }
  }

  private async forget(tenantId: string, key: string, lease: string): Promise<void> {
    try {
      await this.store.release(tenantId, key, lease);
    } catch (error) {
      this.logger.error(
        { err: error },
        'releasing the idempotency key failed; it frees itself when the lock times out',
      );
    }
  }
}
