// A typed client for apps that call Portico: the paths, parameters, bodies and answers come from
// openapi/gateway.json (types generated to src/generated/gateway.ts by `npm run generate`).
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from '../generated/gateway.js';

export type { components, paths };
/** Portico's error body (RFC 9457 problem+json), as every non-2xx answer carries it. */
export type Problem = components['schemas']['Problem'];
export type PorticoClient = Client<paths>;

export interface PorticoClientOptions {
  /** Where Portico answers, e.g. `https://portico.example`; the paths in the spec start at `/v1` or `/health`. */
  baseUrl: string;
  /** A Portico API key (`ptk_…`), sent as `Authorization: Bearer <key>` on every call. */
  apiKey: string;
  /** Another fetch (a test harness, a proxy, undici with a dispatcher); the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
}

/** An openapi-fetch client for the facade, with the API key on every request. */
export function createPorticoClient({
  baseUrl,
  apiKey,
  fetch,
}: PorticoClientOptions): PorticoClient {
  const client = createClient<paths>({ baseUrl, ...(fetch ? { fetch } : {}) });
  const authorization: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${apiKey}`);
      return request;
    },
  };
  client.use(authorization);
  return client;
}
