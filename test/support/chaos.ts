import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type {
  UpstreamResponse,
  UpstreamTransport,
} from '#src/upstreams/http/upstream-transport.js';
import { contract, type Call } from './sandbox-api.js';

/** The path of one operation of openapi/upstream/psd2.yaml with its parameters filled in. */
export function operationPath(operationId: string, params: Record<string, string> = {}): string {
  return contract
    .operation(operationId)
    .path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
      encodeURIComponent(params[name] ?? `missing-${name}`),
    );
}

/**
 * Calls one operation over the real transport without checking the answer against the contract: an
 * injected fault answers what the contract does not promise.
 */
export function sendOperation<T = Record<string, unknown>>(
  transport: UpstreamTransport,
  operationId: string,
  call: Call = {},
): Promise<UpstreamResponse<T>> {
  return transport.send<T>({
    method: contract.operation(operationId).method,
    path: operationPath(operationId, call.params),
    query: call.query,
    headers: { 'x-request-id': randomUUID(), ...call.headers },
    json: call.body,
  });
}

/** Resolves once `condition` holds, checking every 10 ms; gives up after `limitMs`. */
/**
 * Polls an asynchronous check every `everyMs` until it holds; resolves with the milliseconds it took, or
 * rejects naming `what` once `limitMs` have passed.
 */
export async function eventually(
  check: () => Promise<boolean>,
  limitMs = 10_000,
  what = 'the condition',
  everyMs = 100,
): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started >= limitMs) throw new Error(`not within ${limitMs} ms: ${what}`);
    await sleep(everyMs);
  }
  return Date.now() - started;
}

export async function until(condition: () => boolean, limitMs = 10_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited >= limitMs) throw new Error('condition not reached');
    await sleep(10);
  }
}
