import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/psd2.js';
import type { UpstreamTransport } from '../http/upstream-transport.js';

export type OpenBankingApi = Client<paths>;

/** The provider's open-banking API, typed from openapi/psd2.yaml, over the mTLS transport. */
export class OpenBankingClient {
  readonly api: OpenBankingApi;

  constructor(readonly transport: UpstreamTransport) {
    this.api = createClient<paths>({
      baseUrl: transport.options.baseUrl,
      fetch: transport.fetch,
      Request: transport.Request,
    });
  }
}
