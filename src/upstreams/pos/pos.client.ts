import type { components, operations } from '#src/generated/pos.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import type { OpenApiContract } from '#src/shared/contracts/openapi-contract.js';
import { contractCheck, type ContractMismatchListener } from '../http/contract-check.js';
import { methodOf, type OperationClient, type OperationPaths } from '../http/operation-client.js';
import { typedClient } from '../http/typed-client.js';
import type { UpstreamAnswer, UpstreamCaller } from '../http/upstream-caller.js';
import type { UpstreamTransport } from '../http/upstream-transport.js';

export type PosOperation = keyof operations;

/** The JSON a POS operation answers on success (typed from openapi/upstream/pos.yaml). */
export type PosAnswer<O extends PosOperation> = operations[O]['responses'] extends {
  200: { content: { 'application/json': infer T } };
}
  ? T
  : never;

type Schemas = components['schemas'];

/**
 * A payment or a void as sent (pos.yaml's PosTransactionRequest). pos.yaml's discriminator has no
 * mapping (Ajv supports none), so the generated types name each branch's `type` after its schema: the
 * values the contract's enums hold are put back here; `tip` is optional as the contract has it.
 */
export type PosTransactionRequest =
  | (Omit<Schemas['PosPaymentRequest'], 'type' | 'tip'> & { type: 'payment'; tip?: number })
  | (Omit<Schemas['PosVoidRequest'], 'type'> & { type: 'void' });

export type PosTransactionResult = Schemas['PosTransactionResult'];

type Parameters<O extends PosOperation> = operations[O]['parameters'];

/** An operation's query arguments (pos.yaml's). */
export type PosQueryOf<O extends PosOperation> = NonNullable<Parameters<O>['query']>;

/** The JSON body an operation takes: a transaction's is PosTransactionRequest (above), others take none. */
type PosJson<O extends PosOperation> = O extends 'createPosTransaction'
  ? PosTransactionRequest
  : never;

/** A part of a request: required when the operation requires it (`T` does not admit undefined). */
type Part<K extends string, T> = undefined extends T ? { [P in K]?: T } : { [P in K]: T };

/** What one POS operation is called with, typed from pos.yaml: its path parameters, query and body. */
export type PosRequest<O extends PosOperation> = Part<'path', Parameters<O>['path']> &
  Part<'query', Parameters<O>['query']> &
  Part<'json', undefined extends operations[O]['requestBody'] ? undefined : PosJson<O>>;

/** Any operation's request, as the client sends it. */
interface RequestParts {
  path?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  json?: PosTransactionRequest;
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
  readonly api?: OperationClient;

  constructor(
    readonly transport: UpstreamTransport | undefined,
    readonly contract: OpenApiContract,
    readonly caller: UpstreamCaller,
    private readonly keyOf: PosKeySource,
    onMismatch: ContractMismatchListener,
  ) {
    if (!transport) return;
    this.api = typedClient<OperationPaths>(transport, contractCheck('pos', contract, onMismatch));
  }

  async call<O extends PosOperation>(
    operation: O,
    tenantId: string,
    request: PosRequest<O>,
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
    const parts: RequestParts = request;
    return this.caller.call<PosAnswer<O>>(
      { operation, safe: method === 'GET', breakerKey: tenantId },
      async (deadline) => {
        const { data, error, response } = await api.request(methodOf(method), path, {
          params: { path: parts.path, query: parts.query },
          headers: { authorization, accept: 'application/json' },
          ...(parts.json ? { body: parts.json } : {}),
          deadline,
        });
        // The contract check held the answer to the operation's schema.
        return { data: data as PosAnswer<O> | undefined, error, response };
      },
    );
  }
}
