import type { operations } from '#src/generated/card.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import type { OpenApiContract } from '#src/shared/contracts/openapi-contract.js';
import { contractCheck, type ContractMismatchListener } from '../http/contract-check.js';
import { encodeForm } from '../http/form-encoding.js';
import { methodOf, type OperationClient, type OperationPaths } from '../http/operation-client.js';
import { typedClient } from '../http/typed-client.js';
import type { UpstreamAnswer, UpstreamCaller } from '../http/upstream-caller.js';
import type { UpstreamTransport } from '../http/upstream-transport.js';
import { CardSpellings } from './card-spellings.js';
import { tdsRefusal } from './tds-refusal.js';

export type CardOperation = keyof operations;

/** The JSON a card operation answers on success (typed from openapi/upstream/card.yaml). */
export type CardAnswer<O extends CardOperation> = operations[O]['responses'] extends {
  200: { content: { 'application/json': infer T } };
}
  ? T
  : never;

type Parameters<O extends CardOperation> = operations[O]['parameters'];

/** The form an operation takes (card.yaml's form-encoded request body, the provider's spelling). */
export type CardOperationForm<O extends CardOperation> = FormOf<
  NonNullable<operations[O]['requestBody']>
>;

type FormOf<B> = [B] extends [never]
  ? never
  : B extends {
        content: { 'application/x-www-form-urlencoded': infer F extends Record<string, unknown> };
      }
    ? F
    : never;

/** An operation's query arguments (card.yaml's, the provider's spelling). */
export type CardQueryOf<O extends CardOperation> = NonNullable<Parameters<O>['query']>;

/** The form field the client fills with the merchant's key (card.yaml `x-portico-key-in-body`). */
export type CardKeyInBody = 'pk';

/** A form as the caller gives it: the key's field is the client's to fill. */
type CallerForm<F> = F extends Record<CardKeyInBody, string> ? Omit<F, CardKeyInBody> : F;

/** A part of a request: required when the operation requires it (`T` does not admit undefined). */
type Part<K extends string, T> = undefined extends T ? { [P in K]?: T } : { [P in K]: T };

/**
 * What one card operation is called with, typed from card.yaml: its path parameters, its query and
 * its form (sent form-encoded with bracket nesting, `metadata[k]=v`), each the operation's own.
 */
export type CardRequest<O extends CardOperation> = Part<'path', Parameters<O>['path']> &
  Part<'query', Parameters<O>['query']> &
  Part<
    'form',
    undefined extends operations[O]['requestBody']
      ? CallerForm<CardOperationForm<O>> | undefined
      : CallerForm<CardOperationForm<O>>
  >;

/**
 * `R` when its form has only fields of the operation's form: TypeScript's object types are open, so a
 * form of another operation sharing a field would pass for one whose fields are all optional.
 */
export type OwnForm<O extends CardOperation, R> = R extends { form?: infer F }
  ? [Exclude<keyof F, keyof CardOperationForm<O>>] extends [never]
    ? R
    : { form: { [K in Exclude<keyof F, keyof CardOperationForm<O>>]: `not a field of ${O}` } }
  : R;

/** Any operation's request, as the client sends it. */
interface RequestParts {
  path?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  form?: Record<string, unknown>;
}

/** The merchant keys a call is made with (a tenant's, opened from the store for this call only). */
export type MerchantKeySource = (tenantId: string, publicKey: boolean) => Promise<string>;

/**
 * The provider's card API, typed from openapi/upstream/card.yaml, over its TLS transport: Basic auth
 * with the calling tenant's merchant key (user name, empty password), form-encoded bodies, every answer
 * checked against the contract, every call through the upstream seam (deadline, retries of reads,
 * a circuit per merchant, 502/503/504 mapping). What it brings to the seam: its contract, its
 * authentication and its error-body parser. Answers are read in the seed's spelling where card.yaml
 * accepts the provider's clients' spelling too (CardSpellings).
 */
export class CardClient {
  readonly api?: OperationClient;
  /** The payment form's host (card.yaml `servers` on its path), when it is not the API's. */
  private readonly payformApi?: OperationClient;
  private readonly spellings: CardSpellings;

  constructor(
    readonly transport: UpstreamTransport | undefined,
    readonly contract: OpenApiContract,
    readonly caller: UpstreamCaller,
    private readonly keyOf: MerchantKeySource,
    onMismatch: ContractMismatchListener,
    payformTransport?: UpstreamTransport,
  ) {
    const check = contractCheck('card', contract, onMismatch);
    const clientOf = (over: UpstreamTransport) => {
      return typedClient<OperationPaths>(over, check);
    };
    this.spellings = new CardSpellings(contract);
    if (transport) this.api = clientOf(transport);
    if (payformTransport) this.payformApi = clientOf(payformTransport);
  }

  /**
   * Calls one operation for a tenant (its merchant); reads (GET) are retried within the deadline,
   * writes never. `publicKey`: authenticate with the tenant's public key (card tokens); `keyInBody`:
   * send that key in this body field and no Authorization (the payment form, card.yaml
   * `x-portico-key-in-body`).
   */
  async call<O extends CardOperation>(
    operation: O,
    tenantId: string,
    request: CardRequest<O>,
    options: { publicKey?: boolean; keyInBody?: CardKeyInBody } = {},
  ): Promise<UpstreamAnswer<CardAnswer<O>>> {
    const api = (this.contract.hasOwnServer(operation) && this.payformApi) || this.api;
    if (!api)
      throw new ProblemException({
        status: 503,
        type: PROBLEM_TYPES.unavailable,
        title: 'Service Unavailable',
        detail: 'The card API is not configured (UPSTREAM_CARD_BASE_URL)',
        extensions: { upstream: { failure: 'not-configured', sent: false } },
      });
    const { method, path } = this.contract.operation(operation);
    const key = await this.keyOf(tenantId, options.publicKey ?? false);
    const authorization = options.keyInBody
      ? undefined
      : `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
    const parts: RequestParts = request;
    const form = options.keyInBody ? { ...parts.form, [options.keyInBody]: key } : parts.form;
    const answer = await this.caller.call<CardAnswer<O>>(
      { operation, safe: method === 'GET', breakerKey: tenantId },
      async (deadline) => {
        const { data, error, response } = await api.request(methodOf(method), path, {
          params: { path: parts.path, query: parts.query },
          headers: {
            ...(authorization ? { authorization } : {}),
            accept: 'application/json',
            ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          ...(form
            ? {
                body: form,
                bodySerializer: (body?: Record<string, unknown>) => encodeForm(body ?? {}),
              }
            : {}),
          deadline,
        });
        // The contract check held the answer to the operation's schema.
        return { data: data as CardAnswer<O> | undefined, error, response };
      },
    );
    return this.spellings.answer(operation, answer);
  }

  /**
   * The provider's refusal (4xx), passed on to the app as problem+json with its status and code; card
   * arguments refused for a 3-D Secure merchant become the problem that points to the browser page.
   */
  refusal(
    operation: string,
    answer: UpstreamAnswer<unknown>,
    form?: Record<string, unknown>,
  ): ProblemException {
    return tdsRefusal(answer, form) ?? this.caller.refusal(operation, answer);
  }
}
