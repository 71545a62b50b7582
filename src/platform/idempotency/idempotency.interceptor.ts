import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../../access/auth/api-key.guard.js';
import { ProblemException, type ProblemInit } from '../errors/problem.js';
import { toProblem } from '../errors/to-problem.js';
import { LOGGER } from '../logging/logging.module.js';
import { requestContext } from '../logging/request-context.js';
import { requestFingerprint } from './fingerprint.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  inProgressProblem,
  boundProblem,
  keyReusedProblem,
  readIdempotencyKey,
  storeUnavailableProblem,
} from './idempotency-problems.js';
import { IdempotencyStore, type StoredResponse } from './idempotency.store.js';

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
 * request for 24 hours. Once the request has written its resource (bindIdempotentResource) the key is bound
 * to it: a 5xx is stored and replayed too, and a crash leaves the key pointing at the resource. A 5xx before
 * that forgets the key, so the client may retry it. If the store
 * cannot be reached the handler does not run (503): running it unprotected could do the operation twice.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly store: IdempotencyStore,
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
    return defer(() => this.run(request, http.getResponse<FastifyReply>(), tenantId, key, next));
  }

  private async run(
    request: AuthenticatedRequest,
    reply: FastifyReply,
    tenantId: string,
    key: string,
    next: CallHandler,
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
    if (claim.outcome === 'in-progress') throw inProgressProblem();
    if (claim.outcome === 'bound') throw boundProblem(claim.resource);
    if (claim.outcome === 'completed') {
      if (claim.response.status >= 400) throw replayedProblem(claim.response);
      reply
        .status(claim.response.status)
        .headers({ ...claim.response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' });
      return claim.response.body;
    }

    const { lease } = claim;
    let bound = false;
    const context = requestContext.getStore();
    if (context)
      context.idempotency = {
        bind: async (resource) => {
          await this.store.bind(tenantId, key, lease, resource);
          bound = true;
        },
      };
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
      if (problem && (problem.status < 500 || (bound && !notSent)))
        await this.finish(tenantId, key, lease, storedProblem(problem));
      else await this.forget(tenantId, key, lease);
      throw error;
    }
    // Nest set the route's status (and @Header()s) before the interceptors; the handler may have changed them.
    await this.finish(tenantId, key, lease, {
      status: reply.statusCode,
      body: result,
      headers: replayableHeaders(reply.getHeaders()),
    });
    return result;
  }

  /**
   * The operation has run: its answer goes to the client even if it cannot be stored, since a 503 would
   * invite a retry that does it again. The record stays in progress (409 to repeats) until the lock times out.
   */
  private async finish(
    tenantId: string,
    key: string,
    lease: string,
    response: StoredResponse,
  ): Promise<void> {
    try {
      if (!(await this.store.complete(tenantId, key, lease, response))) {
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
