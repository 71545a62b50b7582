import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { FREE_SANDBOX_PORTS, freePort, startProcess } from '../support/processes.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { testEnv } from '../support/test-gateway.js';

describe('the gateway process with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let receiver: OtlpReceiver;
  // A database of its own: a gateway started on the shared one by another file revokes the demo key.
  let database: OwnDatabase;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    database = await ownDatabase('tracing');
  });
  afterAll(async () => {
    await receiver.close();
    await database.drop();
  });

  it('loads the SDK on demand, traces a card call to the sandbox in the same process, and exports what waits at shutdown', async () => {
    const port = await freePort();
    const gateway = startProcess('dist/main.js', [], {
      ...testEnv({ DATABASE_URL: database.url }),
      ...FREE_SANDBOX_PORTS,
      PORT: String(port),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      // Nothing is exported before shutdown: what the gateway holds then must not be lost.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    try {
      const [, key] = await gateway.waitFor(
        /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
        60_000,
      );
      await gateway.waitFor(/Card API: .*card merchant: ready/);
      const traceId = randomBytes(16).toString('hex');
      const answer = await fetch(`http://127.0.0.1:${port}/v1/card/branches`, {
        headers: {
          authorization: `Bearer ${key}`,
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        },
      });
      expect(answer.status).toBe(200);
      const requestId = answer.headers.get('x-request-id');
      expect(receiver.trace(traceId)).toEqual([]);

      gateway.child.kill('SIGTERM');
      expect((await gateway.exited).code).toBe(0);
      const call = await receiver.span(traceId, (span) => span.name === 'card listBranches');
      const request = await receiver.span(traceId, (span) => span.name === 'GET /v1/card/branches');
      expect(call.parentSpanId).toBe(request.spanId);
      expect(request.resource['service.name']).toBe('portico');

      const lines = gateway
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: 'request completed', requestId, traceId }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({
          component: 'sandbox',
          msg: 'sandbox request',
          listener: 'card',
          requestId,
          traceparent: `00-${traceId}-${call.spanId}-01`,
        }),
      );
    } finally {
      gateway.child.kill('SIGKILL');
    }
  });
});

describe('the standalone sandbox (npm run sandbox)', () => {
  it('logs each request of its provider listeners with the traceparent it received, as JSON lines on stdout', async () => {
    const sandbox = startProcess('dist/sandbox/main.js', [], {
      ...FREE_SANDBOX_PORTS,
      DATABASE_URL: '',
    });
    const agent = new Agent({ connect: { ca: readFileSync('certs/dev/ca.pem') } });
    try {
      const [, cardUrl] = await sandbox.waitFor(/card API \(TLS, Basic auth\):\s+(https:\/\/\S+)/);
      const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      const answer = await request(`${cardUrl}/branches`, {
        dispatcher: agent,
        headers: { traceparent },
      });
      await answer.body.dump();
      expect(answer.statusCode).toBe(401);
      const [line] = await sandbox.waitFor(/\{[^\n]*"msg":"sandbox request"[^\n]*\}/);
      expect(JSON.parse(line)).toMatchObject({
        level: 30,
        service: 'portico-sandbox',
        listener: 'card',
        method: 'GET',
        path: '/branches',
        status: 401,
        traceparent,
      });
    } finally {
      sandbox.child.kill('SIGKILL');
      await agent.close();
    }
  });
});
