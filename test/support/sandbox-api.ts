import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Psd2Contract } from '../../src/shared/contracts/psd2-contract.js';
import type {
  UpstreamResponse,
  UpstreamTransport,
} from '../../src/upstreams/http/upstream-transport.js';

export const contract = new Psd2Contract();

export interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Calls one operation of openapi/psd2.yaml over the real transport and checks the answer against the
 * contract: the status is one the operation declares, and the body matches that status's schema.
 */
export async function callOperation<T = Record<string, unknown>>(
  transport: UpstreamTransport,
  operationId: string,
  call: Call = {},
): Promise<UpstreamResponse<T>> {
  const operation = contract.operation(operationId);
  const path = operation.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    encodeURIComponent(call.params?.[name] ?? `missing-${name}`),
  );
  const response = await transport.send<T>({
    method: operation.method,
    path,
    query: call.query,
    headers: { 'x-request-id': randomUUID(), ...call.headers },
    json: call.body,
  });
  const declared = Object.keys(operation.responseSchemas);
  expect({
    operationId,
    status: response.status,
    declared: declared.includes(String(response.status)),
  }).toEqual({ operationId, status: response.status, declared: true });
  const schema = operation.responseSchemas[String(response.status)];
  if (schema)
    expect({
      operationId,
      status: response.status,
      problems: contract.validate(schema, response.body, 'response'),
    }).toEqual({ operationId, status: response.status, problems: [] });
  else
    expect({ operationId, status: response.status, body: response.body }).toEqual({
      operationId,
      status: response.status,
      body: undefined,
    });
  return response;
}

export const tppMessageCode = (response: UpstreamResponse<unknown>) =>
  (response.body as { tppMessages?: { code: string }[] } | undefined)?.tppMessages?.[0]?.code;
