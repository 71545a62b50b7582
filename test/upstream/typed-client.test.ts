import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AnswerCheck } from '#src/upstreams/http/contract-check.js';
import { encodeForm } from '#src/upstreams/http/form-encoding.js';
import { typedClient } from '#src/upstreams/http/typed-client.js';
import type { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

/** A contract of the shape the typed client serves (what openapi-typescript generates). */
interface EchoPaths {
  '/things/{thingId}': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get: {
      parameters: {
        query?: { tag?: string[]; limit?: number };
        header?: { 'X-Request-ID'?: string; 'PSU-IP-Address'?: string };
        path: { thingId: string };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        200: { headers: { [name: string]: unknown }; content: { 'application/json': Echo } };
      };
    };
    post: {
      parameters: { query?: never; header?: never; path: { thingId: string }; cookie?: never };
      requestBody: { content: { 'application/json': { name: string; amount: number } } };
      responses: {
        201: { headers: { [name: string]: unknown }; content: { 'application/json': Echo } };
      };
    };
  };
}

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

describe('upstream typed client', () => {
  // A provider that answers what it received (or, on some paths, an empty or refused answer).
  let provider: Server;
  let transport: UpstreamTransport;
  const checked: string[] = [];
  const check: AnswerCheck = async (method, schemaPath, answer) => {
    checked.push(`${method} ${schemaPath}`);
    const text = await answer.text();
    const json = /[/+]json\b/.test(answer.headers.get('content-type') ?? '');
    return { text, body: json && text !== '' ? (JSON.parse(text) as unknown) : undefined };
  };

  beforeAll(async () => {
    provider = createServer(
      { key: readFileSync('certs/dev/sandbox.key'), cert: readFileSync('certs/dev/sandbox.pem') },
      (request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const id = request.url?.split('?')[0].split('/').pop();
          if (id === 'gone') return void response.writeHead(204).end();
          if (id === 'refused-json')
            return void response
              .writeHead(400, { 'content-type': 'text/plain' })
              .end('{"code":"FORMAT_ERROR"}');
          if (id === 'refused-text')
            return void response.writeHead(400, { 'content-type': 'text/plain' }).end('no');
          const echo = { method: request.method, url: request.url, headers: request.headers, body };
          response.writeHead(request.method === 'POST' ? 201 : 200, {
            'content-type': 'application/json',
          });
          response.end(JSON.stringify(echo));
        });
      },
    );
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', () => resolve()));
    const { port } = provider.address() as { port: number };
    transport = transportTo(`https://localhost:${port}/bank/`, devTlsFiles('certs/dev', 'tpp'));
  });
  afterAll(async () => {
    await transport.close();
    provider.closeAllConnections();
    provider.close();
  });

  it('sends the path, query and headers as openapi-fetch builds them, below the base path', async () => {
    const api = typedClient<EchoPaths>(transport, check);
    const { data, response } = await api.GET('/things/{thingId}', {
      params: {
        path: { thingId: 'a b/c' },
        query: { tag: ['x', 'y'], limit: 5 },
        header: { 'X-Request-ID': 'req-1', 'PSU-IP-Address': '192.0.2.1' },
      },
    });
    expect(response.status).toBe(200);
    expect(data?.method).toBe('GET');
    expect(data?.url).toBe('/bank/things/a%20b%2Fc?tag=x&tag=y&limit=5');
    expect(data?.headers).toMatchObject({ 'x-request-id': 'req-1', 'psu-ip-address': '192.0.2.1' });
    expect(data?.headers['content-type']).toBeUndefined();
    expect(data?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(checked.at(-1)).toBe('GET /things/{thingId}');
  });

  it('sends a JSON body, or the body its serializer makes under the content type given', async () => {
    const api = typedClient<EchoPaths>(transport, check);
    const json = await api.POST('/things/{thingId}', {
      params: { path: { thingId: 't1' } },
      body: { name: 'n', amount: 1 },
    });
    expect(json.response.status).toBe(201);
    expect(json.data?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(json.data!.body)).toEqual({ name: 'n', amount: 1 });

    const form = await api.POST('/things/{thingId}', {
      params: { path: { thingId: 't1' } },
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: { name: 'n', amount: 1 },
      bodySerializer: (body: Record<string, unknown>) => encodeForm(body),
    });
    expect(form.data?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form.data?.body).toBe('name=n&amount=1');
  });

  it('answers no data for 204, and a refusal as its parsed JSON, or as text when it is not JSON', async () => {
    const api = typedClient<EchoPaths>(transport, check);
    const gone = await api.GET('/things/{thingId}', { params: { path: { thingId: 'gone' } } });
    expect(gone.response.status).toBe(204);
    expect(gone.data).toBeUndefined();
    const refusedJson = await api.GET('/things/{thingId}', {
      params: { path: { thingId: 'refused-json' } },
    });
    expect(refusedJson.response.status).toBe(400);
    expect(refusedJson.error).toEqual({ code: 'FORMAT_ERROR' });
    const refusedText = await api.GET('/things/{thingId}', {
      params: { path: { thingId: 'refused-text' } },
    });
    expect(refusedText.error).toBe('no');
  });

  it('hands the answer to the check before the data leaves (a failed check fails the call)', async () => {
    const failing: AnswerCheck = async () => {
      throw new Error('breaks the contract');
    };
    const api = typedClient<EchoPaths>(transport, failing);
    await expect(
      api.GET('/things/{thingId}', { params: { path: { thingId: 't1' } } }),
    ).rejects.toThrow('breaks the contract');
  });
});
