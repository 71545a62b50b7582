import type { paths } from '#src/generated/psd2.js';
import type { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';
import { contractCheck, type ContractMismatchListener } from '../http/contract-check.js';
import { typedClient, type TypedClient } from '../http/typed-client.js';
import type { DeadlineSignal } from '../http/deadline-signal.js';
import type { UpstreamAnswer, UpstreamCaller } from '../http/upstream-caller.js';
import { requestIdHeader, type UpstreamTransport } from '../http/upstream-transport.js';

export type OpenBankingApi = TypedClient<paths>;

/** The headers of a creation the user authorises at the bank: where the bank sends the browser back. */
export function scaRedirectHeaders(callback: string) {
  return {
    ...requestIdHeader(),
    'TPP-Redirect-URI': callback,
    'TPP-Nok-Redirect-URI': callback,
  };
}

/** One typed call of the API (the client binds it to the seam's deadline). */
export type OpenBankingSend<T> = (
  api: OpenBankingApi,
) => Promise<{ data?: T; error?: unknown; response: Response }>;

/**
 * The provider's open-banking API, typed from openapi/upstream/psd2.yaml, over the mTLS transport:
 * every answer is checked against the contract, and every call goes through the upstream seam
 * (deadline, retries of reads, circuit per brand, 502/503/504 mapping).
 */
export class OpenBankingClient {
  readonly api: OpenBankingApi;

  constructor(
    readonly transport: UpstreamTransport,
    readonly contract: Psd2Contract,
    readonly caller: UpstreamCaller,
    onMismatch: ContractMismatchListener,
  ) {
    this.api = typedClient<paths>(transport, contractCheck('open-banking', contract, onMismatch));
  }

  /** Calls one operation of a brand; reads (GET) are retried within the deadline, writes never. */
  call<T>(
    operation: string,
    brandId: string,
    send: OpenBankingSend<T>,
  ): Promise<UpstreamAnswer<T>> {
    const safe = this.contract.operation(operation).method === 'GET';
    return this.caller.call({ operation, safe, breakerKey: brandId }, (deadline) =>
      send(this.until(deadline)),
    );
  }

  /**
   * The typed API with every call ending at the seam's deadline. Every psd2.yaml operation takes
   * parameters (X-Request-ID at least), so each call has the init the deadline joins.
   */
  private until(deadline: DeadlineSignal): OpenBankingApi {
    const api = this.api;
    const GET: OpenBankingApi['GET'] = (url, ...init) => {
      if (init[0]) init[0] = { ...init[0], deadline };
      return api.GET(url, ...init);
    };
    const POST: OpenBankingApi['POST'] = (url, ...init) => {
      if (init[0]) init[0] = { ...init[0], deadline };
      return api.POST(url, ...init);
    };
    const DELETE: OpenBankingApi['DELETE'] = (url, ...init) => {
      if (init[0]) init[0] = { ...init[0], deadline };
      return api.DELETE(url, ...init);
    };
    return { ...api, GET, POST, DELETE };
  }

  /** The provider's refusal (4xx), passed on to the app as problem+json. */
  refusal(operation: string, answer: UpstreamAnswer<unknown>) {
    return this.caller.refusal(operation, answer);
  }
}
