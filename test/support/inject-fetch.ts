import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { HTTPMethods } from 'fastify';
import { createPorticoClient, type PorticoClient } from '#src/client/portico-client.js';
import type { TestGateway } from './test-gateway.js';

/** Statuses whose answers have no body (a Response refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A fetch that answers through Fastify's inject: the request never leaves the process, yet the caller
 * (the typed client) sees an ordinary Request and Response.
 */
export function injectFetch(app: NestFastifyApplication): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const reply = await app.inject({
      method: request.method as HTTPMethods,
      url: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(request.headers),
      ...(body ? { payload: body } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    return new Response(NULL_BODY.has(reply.statusCode) ? null : reply.rawPayload, {
      status: reply.statusCode,
      headers,
    });
  };
}

/** The typed Portico client (what apps use), calling the test gateway in process with an API key. */
export function porticoClient(gateway: TestGateway, apiKey: string): PorticoClient {
  return createPorticoClient({
    baseUrl: 'http://portico.test',
    apiKey,
    fetch: injectFetch(gateway.app),
  });
}
