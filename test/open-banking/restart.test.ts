import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, startProcess, type RunningProcess } from '../support/processes.js';
import { approvedConsentOverHttp } from '../support/consent-flow.js';
import { checkEmbeddedTrail } from '../support/trail-invariants.js';

const MAIN = 'dist/main.js';
const USER_PRESENT = { 'psu-ip-address': '192.0.2.10' };

/** `npm start` as a person runs it: the embedded engine in a data directory, the sandbox inside. */
async function start(
  env: Record<string, string>,
): Promise<{ gateway: RunningProcess; key: string }> {
  const gateway = startProcess(MAIN, [], env);
  const [, key] = await gateway.waitFor(
    /Demo API key \(tenant "demo", role app\): (ptk_\S+)/,
    90_000,
  );
  return { gateway, key };
}

async function stop(gateway: RunningProcess): Promise<void> {
  gateway.child.kill('SIGTERM');
  expect((await gateway.exited).code).toBe(0);
}

describe('a restart of npm start on its embedded database', () => {
  it('reads accounts under a consent the user approved before the restart', async () => {
    const port = await freePort();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'portico-restart-')), 'pglite');
    const env = {
      PORT: String(port),
      EMBEDDED_DB_DIR: dataDir,
      SANDBOX_OB_PORT: '0',
      SANDBOX_CARD_PORT: '0',
      SANDBOX_POS_PORT: '0',
      SANDBOX_SCA_PORT: String(await freePort()),
    };
    const base = `http://127.0.0.1:${port}`;
    const call = (key: string, path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(init.headers as Record<string, string>),
        },
      });

    let running = await start(env);
    let consentId: string;
    let accountId: string;
    let balancesBefore: unknown;
    try {
      ({ consentId, accountId } = await approvedConsentOverHttp((path, init) =>
        call(running.key, path, init),
      ));
      const balances = await call(running.key, `/v1/accounts/${accountId}/balances`, {
        headers: { 'consent-id': consentId, ...USER_PRESENT },
      });
      expect(balances.status).toBe(200);
      balancesBefore = await balances.json();
    } finally {
      await stop(running.gateway).finally(() => running.gateway.child.kill('SIGKILL'));
    }

    running = await start(env);
    try {
      const headers = { 'consent-id': consentId, ...USER_PRESENT };
      const accounts = await call(running.key, '/v1/accounts', { headers });
      expect(accounts.status).toBe(200);
      expect(
        ((await accounts.json()) as { accounts: { resourceId: string }[] }).accounts.map(
          (account) => account.resourceId,
        ),
      ).toEqual([accountId]);
      const balances = await call(running.key, `/v1/accounts/${accountId}/balances`, {
        headers,
      });
      expect(balances.status).toBe(200);
      expect(await balances.json()).toEqual(balancesBefore);
      const consent = (await (await call(running.key, `/v1/consents/${consentId}`)).json()) as {
        status: string;
      };
      expect(consent.status).toBe('valid');
    } finally {
      await stop(running.gateway).finally(() => running.gateway.child.kill('SIGKILL'));
    }
    try {
      await checkEmbeddedTrail(dataDir, env);
    } finally {
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  }, 180_000);
});
