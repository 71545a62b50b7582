import createClient, { type Client } from 'openapi-fetch';
import type { operations, paths } from '../../generated/pos.js';
import { PROBLEM_TYPES, ProblemException } from '../../platform/errors/problem.js';
import type { OpenApiContract } from '../../shared/contracts/openapi-contract.js';
import { contractCheck, type ContractMismatchListener } from '../http/contract-check.js';
import type { UpstreamAnswer, UpstreamCaller } from '../http/upstream-caller.js';
import type { UpstreamTransport } from '../http/upstream-transport.js';

export type PosOperation = keyof operations;

/** The JSON a POS operation answers on success (typed from openapi/upstream/pos.yaml). */
export type PosAnswer<O extends PosOperation> = operations[O]['responses'] extends {
  200: { content: { 'application/json': infer T } };
}
  ? T
  : never;

export interface PosRequest {
  path?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  json?: Record<string, unknown>;
}

/** A tenant's POS key (opened from the store for this call only). */
export type PosKeySource = (tenantId: string) => Promise<string>;

/**
 * The provider's POS terminal interface, typed from openapi/upstream/pos.yaml, over its own TLS
 * transport and seam (its own deadline: a payment lasts as long as the payer at the terminal): Basic
 * auth with the tenant's `p_` key, JSON bodies, every answer checked against the contract. Writes are
 * never retried; the transaction_id is the provider's own handle to find one whose answer was lost.
 */
export class PosClient {
  readonly api?: Client<paths>;

  constructor(
    readonly transport: UpstreamTransport | undefined,
    readonly contract: OpenApiContract,
    readonly caller: UpstreamCaller,
    private readonly keyOf: PosKeySource,
    onMismatch: ContractMismatchListener,
  ) {
    if (!transport) return;
    this.api = createClient<paths>({
      baseUrl: transport.options.baseUrl,
      fetch: transport.fetch,
      Request: transport.Request,
    });
    this.api.use(contractCheck('pos', contract, onMismatch));
  }

  async call<O extends PosOperation>(
    operation: O,
    tenantId: string,
    request: PosRequest = {},
  ): Promise<UpstreamAnswer<PosAnswer<O>>> {
    const api = this.api;
    if (!api)
      throw new ProblemException({
        status: 503,
        type: PROBLEM_TYPES.unavailable,
        title: 'Service Unavailable',
        detail: 'The POS interface is not configured (UPSTREAM_POS_BASE_URL)',
        extensions: { upstream: { failure: 'not-configured', sent: false } },
      });
    const { method, path } = this.contract.operation(operation);
    const key = await this.keyOf(tenantId);
    const authorization = `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
    return this.caller.call<PosAnswer<O>>(
      { operation, safe: method === 'GET', breakerKey: tenantId },
      (deadline) =>
        (
          api.request as unknown as (
            method: string,
            path: string,
            init: object,
          ) => Promise<{ data?: PosAnswer<O>; error?: unknown; response: Response }>
        )(method.toLowerCase(), path, {
          params: { path: request.path, query: request.query },
          headers: { authorization, accept: 'application/json' },
          ...(request.json ? { body: request.json } : {}),
          deadline,
        }),
    );
  }
}
