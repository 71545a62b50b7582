import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ProblemException } from '../../platform/errors/problem.js';
import { LOGGER } from '../../platform/logging/logging.module.js';
import { UpstreamError } from './upstream-errors.js';

export interface TppMessage {
  category?: string;
  code: string;
  text?: string;
  path?: string;
}

export interface UpstreamAnswer<T> {
  status: number;
  data?: T;
  /** Berlin Group error body on 4xx. */
  messages: TppMessage[];
  latencyMs: number;
}

export const UPSTREAM_PROBLEM_TYPES = {
  refused: 'urn:portico:problem:upstream-refused',
  badGateway: 'urn:portico:problem:upstream-failed',
  timeout: 'urn:portico:problem:upstream-timeout',
} as const;

const RETRY_DELAYS_MS = [100, 400];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type TypedCall<T> = () => Promise<{ data?: T; error?: unknown; response: Response }>;

/**
 * The one place where open-banking upstream answers become facade outcomes: reads (GET) are retried with
 * bounded backoff on connection failures and 5xx, writes never; failures become 502/504 problem+json
 * carrying the upstream status and code; 4xx answers are returned for the caller to interpret.
 */
@Injectable()
export class UpstreamCaller {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  async call<T>(
    operation: string,
    method: 'GET' | 'POST' | 'DELETE',
    send: TypedCall<T>,
  ): Promise<UpstreamAnswer<T>> {
    const started = performance.now();
    const attempts = method === 'GET' ? RETRY_DELAYS_MS.length + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        const { data, error, response } = await send();
        const latencyMs = Math.round(performance.now() - started);
        if (response.status >= 500 && attempt < attempts) {
          this.logger.warn(
            { operation, status: response.status, attempt },
            'upstream 5xx; retrying',
          );
          await sleep(RETRY_DELAYS_MS[attempt - 1]);
          continue;
        }
        if (response.status >= 500) {
          throw new ProblemException({
            status: 502,
            type: UPSTREAM_PROBLEM_TYPES.badGateway,
            title: 'Bad Gateway',
            detail: `The bank answered ${response.status} to ${operation}`,
            extensions: { upstream: { status: response.status } },
          });
        }
        const messages = (
          (error as { tppMessages?: TppMessage[] } | undefined)?.tppMessages ?? []
        ).slice(0, 20);
        return { status: response.status, data, messages, latencyMs };
      } catch (error) {
        if (error instanceof ProblemException) throw error;
        const failure = error instanceof UpstreamError ? error : undefined;
        if (failure && attempt < attempts && failure.kind !== 'bad-response') {
          this.logger.warn(
            { operation, kind: failure.kind, attempt },
            'upstream call failed; retrying',
          );
          await sleep(RETRY_DELAYS_MS[attempt - 1]);
          continue;
        }
        if (!failure) throw error;
        const timeout = failure.kind === 'timeout';
        this.logger.warn({ operation, kind: failure.kind, err: failure }, 'upstream call failed');
        throw new ProblemException({
          status: timeout ? 504 : 502,
          type: timeout ? UPSTREAM_PROBLEM_TYPES.timeout : UPSTREAM_PROBLEM_TYPES.badGateway,
          title: timeout ? 'Gateway Timeout' : 'Bad Gateway',
          detail: timeout
            ? `The bank did not answer ${operation} in time`
            : `The bank could not be reached for ${operation} (${failure.kind})`,
          extensions: { upstream: { failure: failure.kind } },
        });
      }
    }
  }

  /** A 4xx the bank gave, passed on to the app with its status and Berlin Group code. */
  refusal(operation: string, answer: UpstreamAnswer<unknown>): ProblemException {
    const [first] = answer.messages;
    return new ProblemException({
      status: answer.status,
      type: UPSTREAM_PROBLEM_TYPES.refused,
      title: 'Refused by the bank',
      detail: first
        ? `${operation}: ${first.code}${first.text ? `: ${first.text}` : ''}`
        : `${operation}: the bank answered ${answer.status}`,
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
}
