import type { TypedClient } from './typed-client.js';

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
export type OperationClient = TypedClient<OperationPaths>;

/** Every route of a contract as an operation of any shape (what OperationClient is typed over). */
export type OperationPaths = Record<string, Record<Method, AnyOperation>>;

/** An operation's method as the typed client's `request` takes it (`GET` in the contract, `get` here). */
export const methodOf = (method: string) => method.toLowerCase() as Method;
