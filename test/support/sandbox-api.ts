import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';
import type {
  UpstreamResponse,
  UpstreamTransport,
} from '#src/upstreams/http/upstream-transport.js';

export const contract = new Psd2Contract();

export interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Calls one operation of openapi/upstream/psd2.yaml over the real transport and checks the answer
 * with the contract's own validator (the one the gateway applies to the provider's answers): the
 * status is one the operation declares, every required header of that answer is there and well
 * formed, and the body matches that status's schema.
 */
export async function callOperation<T = Record<string, unknown>>(
  transport: UpstreamTransport,
  operationId: string,
  call: Call = {},
): Promise<UpstreamResponse<T>> {
  const response = await sendOperation<T>(transport, operationId, call);
  expect({
    operationId,
    status: response.status,
    problems: contract.validateResponse(
      operationId,
      response.status,
      response.headers,
      response.body,
    ),
  }).toEqual({ operationId, status: response.status, problems: [] });
  return response;
}

/** Calls one operation without checking the answer. */
export async function sendOperation<T = Record<string, unknown>>(
  transport: UpstreamTransport,
  operationId: string,
  call: Call = {},
): Promise<UpstreamResponse<T>> {
  const operation = contract.operation(operationId);
  const path = operation.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    encodeURIComponent(call.params?.[name] ?? `missing-${name}`),
  );
  return transport.send<T>({
    method: operation.method,
    path,
    query: call.query,
    headers: { 'x-request-id': randomUUID(), ...call.headers },
    json: call.body,
  });
}

export const tppMessageCode = (response: UpstreamResponse<unknown>) =>
  (response.body as { tppMessages?: { code: string }[] } | undefined)?.tppMessages?.[0]?.code;

/** An AIS consent created at the bank straight through its API (as if Portico's answer had been lost). */
export function createBankConsent(transport: UpstreamTransport) {
  return callOperation(transport, 'createConsent', {
    params: { brandId: 'danube-bank' },
    headers: { 'tpp-redirect-uri': 'https://x.example/cb' },
    body: {
      access: { accounts: [{ iban: 'HU75118000170000001234567817' }] },
      recurringIndicator: true,
      validUntil: '2030-01-01',
    },
  });
}
