import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  FREE_SANDBOX_PORTS,
  freePort,
  killProcessGroup,
  portIsFree,
  processGroupAlive,
  runProcess,
  startNpmScript,
  startProcess,
  type RunningProcess,
} from '../support/processes.js';
import { testDatabaseUrl } from '../support/test-gateway.js';

const MAIN = 'dist/main.js';

describe('the gateway process', () => {
  it('refuses to start on a malformed variable, naming it', async () => {
    const result = await runProcess(MAIN, [], { PORT: 'eighty', DATABASE_URL: testDatabaseUrl() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('PORT: must be a whole number from 0 to 65535 (got "eighty")');
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('refuses to start in production mode without the upstream variables', async () => {
    const result = await runProcess(MAIN, [], {
      PORTICO_MODE: 'production',
      DATABASE_URL: testDatabaseUrl(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'UPSTREAM_CLIENT_CERT_FILE: required when PORTICO_MODE=production',
    );
  });

  it('names the variable that moves a port already in use, without a stack trace', async () => {
    const holder = createServer();
    const taken = await freePort();
    await new Promise<void>((listening) => holder.listen(taken, '127.0.0.1', listening));
    try {
      const quiet = {
        DATABASE_URL: testDatabaseUrl(),
        PROVIDER_SYNC_INTERVAL_MS: '0',
        RESOLVER_INTERVAL_MS: '0',
        RECONCILE_ON_START: 'false',
        ...FREE_SANDBOX_PORTS,
      };
      const gatewayPort = await runProcess(MAIN, [], { ...quiet, PORT: String(taken) });
      expect(gatewayPort.code).toBe(1);
      expect(gatewayPort.stderr).toBe(
        `portico: port ${taken} on 127.0.0.1 is already in use (EADDRINUSE): another program, or another Portico, listens there. Stop it, or start with PORT=<another port> (0: any free port).\n`,
      );
      const sandboxPort = await runProcess(MAIN, [], {
        ...quiet,
        PORT: String(await freePort()),
        SANDBOX_CARD_PORT: String(taken),
      });
      expect(sandboxPort.code).toBe(1);
      expect(sandboxPort.stderr).toContain(
        `is already in use (EADDRINUSE): another program, or another Portico, listens there. Stop it, or start with SANDBOX_CARD_PORT=<another port>`,
      );
      expect(sandboxPort.stderr).not.toMatch(/at .*\.js:\d+/);
      // Every taken port at once, each with its variable: not one message per attempt.
      const other = createServer();
      const alsoTaken = await freePort();
      await new Promise<void>((listening) => other.listen(alsoTaken, '127.0.0.1', listening));
      try {
        const both = await runProcess(MAIN, [], {
          ...quiet,
          PORT: String(taken),
          SANDBOX_SCA_PORT: String(alsoTaken),
        });
        expect(both.code).toBe(1);
        expect(both.stderr).toBe(
          `portico: ports ${taken} (PORT), ${alsoTaken} (SANDBOX_SCA_PORT) are already in use: another program, or another Portico, listens there.\n  Stop it, or start with PORT=<another port> SANDBOX_SCA_PORT=<another port> (0: any free port).\n`,
        );
      } finally {
        other.close();
      }
      // The sandbox alone (npm run sandbox) says the same of its own ports.
      const alone = await runProcess('dist/sandbox/main.js', [], {
        ...FREE_SANDBOX_PORTS,
        SANDBOX_POS_PORT: String(taken),
      });
      expect(alone.code).toBe(1);
      expect(alone.stderr).toBe(
        `portico sandbox: port ${taken} is already in use (EADDRINUSE): stop what listens there, or start with SANDBOX_POS_PORT=<another port> (0: any free port).\n`,
      );
    } finally {
      holder.close();
    }
  });

  it('starts on the embedded database with nothing configured, prints the docs address and a working demo key', async () => {
    const port = await freePort();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'portico-embedded-')), 'pglite');
    const gateway = startProcess(MAIN, [], {
      PORT: String(port),
      EMBEDDED_DB_DIR: dataDir,
      ...FREE_SANDBOX_PORTS,
    });
    try {
      // A fresh engine's first start (its migrations) took about a minute at a load of 15: room for that.
      const [, ms] = await gateway.waitFor(
        /Portico is ready \(sandbox mode\) in (\d+) ms/,
        120_000,
      );
      expect(Number(ms)).toBeGreaterThan(0);
      expect(gateway.stdout()).toContain(`Swagger UI:   http://127.0.0.1:${port}/docs`);
      const [, key] = await gateway.waitFor(/Demo API key \(tenant "demo", role app\): (ptk_\S+)/);
      const me = await fetch(`http://127.0.0.1:${port}/v1/me`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ tenantSlug: 'demo', role: 'app' });
      // The installation's first key: an operator's, which sees the readiness checks.
      const [, operatorKey] = await gateway.waitFor(
        /Operator key \(tenant "operations", role operator\): (ptk_\S+)/,
      );
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`, {
        headers: { authorization: `Bearer ${operatorKey}` },
      });
      expect(await ready.json()).toMatchObject({
        status: 'ok',
        checks: { certificate: { daysToExpiry: expect.any(Number) } },
      });
      // A compliance officer's first key, and the page it opens.
      const [, auditorKey] = await gateway.waitFor(
        /Auditor key \(tenant "operations", role auditor\): (ptk_\S+)/,
      );
      expect(gateway.stdout()).toContain(`Auditor's page: http://127.0.0.1:${port}/audit`);
      const verification = await fetch(`http://127.0.0.1:${port}/v1/audit/verification`, {
        headers: { authorization: `Bearer ${auditorKey}` },
      });
      expect(verification.status).toBe(200);
      expect(await verification.json()).toMatchObject({ ok: true });
      expect((await fetch(`http://127.0.0.1:${port}/audit`)).status).toBe(200);
      // A second start on the same data directory says, once, where the first runs and how to start beside it.
      const second = await runProcess(MAIN, [], {
        PORT: String(await freePort()),
        EMBEDDED_DB_DIR: dataDir,
        ...FREE_SANDBOX_PORTS,
      });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        `portico: Portico is already running on this data directory (${dataDir}): process ${gateway.child.pid}, http://127.0.0.1:${port} (Swagger UI http://127.0.0.1:${port}/docs)`,
      );
      expect(second.stderr).toContain('EMBEDDED_DB_DIR=./data-2/pglite npm start');
      expect(second.stderr.match(/already/g)).toHaveLength(1);
      const anonymous = await fetch(`http://127.0.0.1:${port}/v1/me`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const docs = await fetch(`http://127.0.0.1:${port}/docs`);
      expect(docs.status).toBe(200);
      // Metrics on their own listener (a free port here), printed in the banner; /v1/me was counted.
      const [, metricsUrl] = await gateway.waitFor(
        /Metrics: +(http:\/\/127\.0\.0\.1:\d+\/metrics)/,
      );
      const metrics = await (await fetch(metricsUrl)).text();
      expect(metrics).toMatch(
        /^portico_http_requests_total\{method="GET",route="\/v1\/me",status="200"\} 1$/m,
      );
      // The key was shown on the terminal banner only; no JSON log line carries it.
      const logLines = gateway
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'));
      expect(logLines.length).toBeGreaterThan(0);
      // The embedded engine has no pgcrypto to install, and needs none: no TypeORM warning at start.
      expect(gateway.stdout()).not.toContain('pgcrypto');
      expect(logLines.filter((line) => line.includes('"level":"warn"'))).toEqual([]);
      expect(logLines.join('\n')).not.toContain(key);
      expect(logLines.join('\n')).not.toContain(operatorKey);
      expect(logLines.join('\n')).not.toContain(auditorKey);
      gateway.child.kill('SIGTERM');
      expect((await gateway.exited).code).toBe(0);

      // The keys are kept beside the data directory, readable by this user only, and printed again.
      const keysFile = join(dirname(dataDir), 'sandbox-keys.json');
      expect(statSync(keysFile).mode & 0o777).toBe(0o600);
      expect(gateway.stdout()).toContain(`Keys kept in ${keysFile} (yours only)`);
      const again = startProcess(MAIN, [], {
        PORT: String(port),
        EMBEDDED_DB_DIR: dataDir,
        ...FREE_SANDBOX_PORTS,
      });
      try {
        const [, keptKey] = await again.waitFor(
          /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
          120_000,
        );
        const [, keptOperatorKey] = await again.waitFor(
          /Operator key \(tenant "operations", role operator\): (ptk_\S+)/,
        );
        const [, keptAuditorKey] = await again.waitFor(
          /Auditor key \(tenant "operations", role auditor\): (ptk_\S+)/,
        );
        expect([keptKey, keptOperatorKey, keptAuditorKey]).toEqual([key, operatorKey, auditorKey]);
        const meAgain = await fetch(`http://127.0.0.1:${port}/v1/me`, {
          headers: { authorization: `Bearer ${keptKey}` },
        });
        expect(meAgain.status).toBe(200);
        again.child.kill('SIGTERM');
        expect((await again.exited).code).toBe(0);
      } finally {
        again.child.kill('SIGKILL');
      }
    } finally {
      gateway.child.kill('SIGKILL');
    }
  }, 300_000);

  it('finishes in-flight requests on SIGTERM, refuses new connections, and exits cleanly', async () => {
    const port = await freePort();
    const gateway = startProcess(MAIN, [], {
      PORT: String(port),
      DATABASE_URL: testDatabaseUrl(),
      PORTICO_MODE: 'sandbox',
      // On the shared test database: no background read of other files' rows against this sandbox.
      PROVIDER_SYNC_INTERVAL_MS: '0',
      RESOLVER_INTERVAL_MS: '0',
      ...FREE_SANDBOX_PORTS,
    });
    await gateway.waitFor(/Portico is ready/);

    // A request whose body is still arriving when the signal comes.
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    const body = JSON.stringify({ slug: 'in-flight', name: 'In flight' });
    socket.write(
      `POST /v1/tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    // Nothing tells when the server has read the partial request from the socket: a fixed 200 ms lets
    // it, so that the signal meets a request under way rather than one not yet seen.
    await new Promise((resolve) => setTimeout(resolve, 200));

    gateway.child.kill('SIGTERM');
    await gateway.waitFor(/shutting down/);
    const refused = await fetch(`http://127.0.0.1:${port}/health/live`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).toBe('refused');

    socket.write(body.slice(10));
    await new Promise<void>((resolve) => socket.once('end', () => resolve()));
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toContain('application/problem+json');
    const { code } = await gateway.exited;
    expect(code).toBe(0);
    expect(gateway.stdout()).toContain('shutdown complete');
  });
});

describe('npm start', () => {
  /** `npm start` on free ports, ready to answer; builds first only when a source changed since the last build. */
  async function startGateway(): Promise<{ npm: RunningProcess; port: number }> {
    const port = await freePort();
    const npm = startNpmScript('start', {
      PORT: String(port),
      DATABASE_URL: testDatabaseUrl(),
      PORTICO_MODE: 'sandbox',
      // On the shared test database: no background read of other files' rows against this sandbox.
      PROVIDER_SYNC_INTERVAL_MS: '0',
      RESOLVER_INTERVAL_MS: '0',
      ...FREE_SANDBOX_PORTS,
    });
    await npm.waitFor(/Portico is ready/, 120_000);
    return { npm, port };
  }

  it('stops the gateway on SIGTERM to the npm process: the port is released and no process of it is left', async () => {
    const { npm, port } = await startGateway();
    try {
      npm.child.kill('SIGTERM');
      expect(await npm.exited).toEqual({ code: 0, signal: null });
      expect(npm.stdout()).toContain('shutdown complete');
      expect(processGroupAlive(npm.child.pid!)).toBe(false);
      expect(await portIsFree(port)).toBe(true);
    } finally {
      killProcessGroup(npm.child.pid);
    }
  });

  it('shuts down gracefully once when the whole group gets SIGINT, as from Ctrl-C in a terminal', async () => {
    const { npm, port } = await startGateway();
    try {
      // The gateway gets the signal twice: directly, and forwarded by npm.
      process.kill(-npm.child.pid!, 'SIGINT');
      expect(await npm.exited).toEqual({ code: 0, signal: null });
      expect(npm.stdout().match(/shutting down/g)).toHaveLength(1);
      expect(npm.stdout()).toContain('shutdown complete');
      expect(processGroupAlive(npm.child.pid!)).toBe(false);
      expect(await portIsFree(port)).toBe(true);
    } finally {
      killProcessGroup(npm.child.pid);
    }
  });
});
