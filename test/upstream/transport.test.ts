import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { DeadlineSignal } from '#src/upstreams/http/deadline-signal.js';
import { encodeForm } from '#src/upstreams/http/form-encoding.js';
import { UpstreamError } from '#src/upstreams/http/upstream-errors.js';
import { freePort } from '../support/processes.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

describe('upstream transport failures', () => {
  // A stand-in for a provider that accepts the connection and never answers: outside our control.
  let silent: Server;
  let silentPort: number;
  beforeAll(async () => {
    silent = createServer(
      { key: readFileSync('certs/dev/sandbox.key'), cert: readFileSync('certs/dev/sandbox.pem') },
      () => undefined,
    );
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    silentPort = (silent.address() as { port: number }).port;
  });
  afterAll(() => {
    silent.closeAllConnections();
    silent.close();
  });

  const kindOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return 'answered';
    } catch (error) {
      return error instanceof UpstreamError ? error.kind : `untyped: ${String(error)}`;
    }
  };

  it('reports a refused connection', async () => {
    const port = await freePort();
    const transport = transportTo(`https://localhost:${port}`, devTlsFiles('certs/dev', 'tpp'));
    expect(await kindOf(transport.send({ method: 'GET', path: '/brands' }))).toBe('refused');
    await transport.close();
  });

  it('reports a provider that does not answer in time as a timeout', async () => {
    const transport = transportTo(
      `https://localhost:${silentPort}`,
      devTlsFiles('certs/dev', 'tpp'),
      { headersTimeoutMs: 300 },
    );
    expect(await kindOf(transport.send({ method: 'GET', path: '/brands' }))).toBe('timeout');
    await transport.close();
  });
});

describe('the transport for a form-encoded API with Basic auth (the card API)', () => {
  // A stand-in for the provider's card API that echoes what it received.
  let echo: Server;
  beforeAll(async () => {
    echo = createServer(
      { key: readFileSync('certs/dev/sandbox.key'), cert: readFileSync('certs/dev/sandbox.pem') },
      (request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              authorization: request.headers.authorization,
              contentType: request.headers['content-type'],
              requestId: request.headers['x-request-id'],
              body,
            }),
          );
        });
      },
    );
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
  });
  afterAll(() => {
    echo.closeAllConnections();
    echo.close();
  });

  it('sends Basic credentials, a bracket-encoded form body and a request id', async () => {
    const transport = transportTo(
      `https://localhost:${(echo.address() as { port: number }).port}`,
      devTlsFiles('certs/dev', 'tpp'),
      { basicAuth: { username: 'sk_test_123', password: '' } },
    );
    const response = await transport.send<Record<string, string>>({
      method: 'POST',
      path: '/payments',
      form: { amount: 1000, metadata: { order: 'A-1' } },
    });
    await transport.close();
    expect(response.body).toMatchObject({
      authorization: `Basic ${Buffer.from('sk_test_123:').toString('base64')}`,
      contentType: 'application/x-www-form-urlencoded',
      body: 'amount=1000&metadata%5Border%5D=A-1',
    });
    expect(response.body?.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('form encoding for the card API', () => {
  it('writes nested objects with brackets and lists with numeric indices, percent-encoded', () => {
    expect(
      encodeForm({
        amount: 1000,
        metadata: { order: 'A-1', note: 'a&b' },
        domain_names: ['a.example', 'b.example'],
        skipped: undefined,
      }),
    ).toBe(
      'amount=1000&metadata%5Border%5D=A-1&metadata%5Bnote%5D=a%26b&domain_names%5B0%5D=a.example&domain_names%5B1%5D=b.example',
    );
  });
});

describe("the typed clients' fetch (the answer gathered by the transport)", () => {
  // A stand-in provider: a whole answer with a repeated header, one that breaks off, one that stalls.
  let provider: Server;
  let port: number;
  beforeAll(async () => {
    provider = createServer(
      { key: readFileSync('certs/dev/sandbox.key'), cert: readFileSync('certs/dev/sandbox.pem') },
      (request, response) => {
        if (request.url === '/whole') {
          response.setHeader('set-cookie', ['a=1', 'b=2']);
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end('\uFEFF{"ok":true}');
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        response.write('{"partial":');
        if (request.url === '/broken') setTimeout(() => response.destroy(), 20);
      },
    );
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', () => resolve()));
    port = (provider.address() as { port: number }).port;
  });
  afterAll(() => {
    provider.closeAllConnections();
    provider.close();
  });

  const dispatchTo = (path: string, deadline?: DeadlineSignal) => {
    const transport = transportTo(`https://localhost:${port}`, devTlsFiles('certs/dev', 'tpp'));
    return {
      transport,
      answer: transport.dispatch({ method: 'GET', path, headers: {}, signal: deadline }),
    };
  };

  it('answers at the headers and hands the whole body over as text', async () => {
    const { transport, answer } = dispatchTo('/whole');
    const response = await answer;
    expect(response.status).toBe(200);
    expect(response.headers.get('Set-Cookie')).toBe('a=1, b=2');
    expect(await response.text()).toBe('{"ok":true}');
    await transport.close();
  });

  it('fails the body, not the answer, when the body breaks off', async () => {
    const { transport, answer } = dispatchTo('/broken');
    const response = await answer;
    await expect(response.text()).rejects.toThrow();
    await transport.close();
  });

  it('ends a stalled body at the deadline', async () => {
    const deadline = new DeadlineSignal();
    const { transport, answer } = dispatchTo('/stalled', deadline);
    const response = await answer;
    setTimeout(() => deadline.abort(new DOMException('The deadline passed', 'TimeoutError')), 50);
    await expect(response.text()).rejects.toMatchObject({ name: 'TimeoutError' });
    await transport.close();
  });
});
