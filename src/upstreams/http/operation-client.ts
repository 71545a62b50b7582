import type { AnswerCheck } from './contract-check.js';
import { typedClient, type TypedClient } from './typed-client.js';
import type { UpstreamTransport } from './upstream-transport.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** Any operation of a contract, as the typed client sees one whose route is chosen at run time. */
interface AnyOperation {
  parameters: {
    query?: Record<string, unknown>;
    header?: Record<string, unknown>;
    path?: Record<string, unknown>;
  };
  requestBody?: { content: { 'application/json': Record<string, unknown> } };
  responses: Record<number, { content: { 'application/json': unknown } }>;
}

/**
 * A client over a contract's routes by operationId (the contract gives the method and path at run time):
 * its answers are `unknown` until the caller types them from the generated `operations`, which the
 * contract check (every answer validated against the same contract) makes true.
 */
export type OperationClient = TypedClient<Record<string, Record<Method, AnyOperation>>>;

export function operationClient(transport: UpstreamTransport, check: AnswerCheck): OperationClient {
  return typedClient(transport, check);
}

/** An operation's method as the typed client's `request` takes it (`GET` in the contract, `get` here). */
export const methodOf = (method: string) => method.toLowerCase() as Method;
