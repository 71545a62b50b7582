import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startSandbox } from '#src/sandbox/sandbox.js';
import type { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';
import { callOperation, tppMessageCode } from '../support/sandbox-api.js';
import { freePort } from '../support/processes.js';
import { completeSca } from '../support/sca.js';
import { testDatabaseUrl } from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

const BRAND = 'danube-bank';
const ALICE_HUF = 'HU75118000170000001234567817';
const REDIRECTS = { 'tpp-redirect-uri': 'https://tpp.example/ok' };
const alice = { username: 'alice', password: 'alice-pass' };
const inDays = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const scaHref = (body: unknown) =>
  (body as { _links: { scaRedirect: { href: string } } })._links.scaRedirect.href;
const access = {
  accounts: [{ iban: ALICE_HUF }],
  balances: [{ iban: ALICE_HUF }],
  transactions: [{ iban: ALICE_HUF }],
};

/**
 * A sandbox on the test database, in a schema of its own, and a TPP talking to it. The SCA pages keep
 * their port across restarts, as a deployed sandbox's do: links handed out before a restart stay valid.
 */
async function bankOn(schema: string | undefined, scaPort = 0) {
  const sandbox = await startSandbox({
    certsDir: 'certs/dev',
    host: '127.0.0.1',
    openBankingPort: 0,
    scaPort,
    ...(schema ? { database: { url: testDatabaseUrl(), schema } } : {}),
  });
  const tpp = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
  return {
    sandbox,
    tpp,
    async stop() {
      await tpp.close();
      await sandbox.close();
    },
  };
}

describe('the sandbox keeps its state in its own schema across restarts', () => {
  const schema = `sandbox_test_${randomBytes(4).toString('hex')}`;
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.end();
  });

  const read = (tpp: UpstreamTransport, operationId: string, consentId: string, extra = {}) =>
    callOperation(tpp, operationId, {
      params: { brandId: BRAND, ...extra },
      headers: { 'consent-id': consentId },
    });

  it('carries on after a restart: consents, a pending authorisation, payments, bookings and the daily budget', async () => {
    const scaPort = await freePort();
    let running = await bankOn(schema, scaPort);
    let consentId: string;
    let waitingScaHref: string;
    let waitingConsentId: string;
    let paymentId: string;
    let before: { balances: unknown; transactions: unknown; accountId: string };
    try {
      const { tpp } = running;
      const created = await callOperation(tpp, 'createConsent', {
        params: { brandId: BRAND },
        headers: REDIRECTS,
        body: { access, recurringIndicator: true, validUntil: inDays(30), frequencyPerDay: 2 },
      });
      consentId = created.body?.consentId as string;
      await completeSca(scaHref(created.body), { ...alice, decision: 'approve' });
      const waiting = await callOperation(tpp, 'createConsent', {
        params: { brandId: BRAND },
        headers: REDIRECTS,
        body: { access, recurringIndicator: false, validUntil: inDays(1) },
      });
      waitingConsentId = waiting.body?.consentId as string;
      waitingScaHref = scaHref(waiting.body);

      const payment = await callOperation(tpp, 'initiatePayment', {
        params: { brandId: BRAND, paymentProduct: 'domestic-credit-transfers' },
        headers: REDIRECTS,
        body: {
          instructedAmount: { currency: 'HUF', amount: '12345.00' },
          creditorName: 'Kovacs Peter',
          creditorAccount: { iban: 'HU42117730161111101800000000' },
          creditorType: 'INDIVIDUAL',
          remittanceInformationUnstructured: 'Before the restart',
        },
      });
      paymentId = payment.body?.paymentId as string;
      await completeSca(scaHref(payment.body), {
        ...alice,
        decision: 'approve',
        debtorAccount: ALICE_HUF,
      });

      // One unattended read of the two the consent allows today.
      const accounts = await read(tpp, 'listAccounts', consentId);
      const accountId = (accounts.body?.accounts as { resourceId: string }[])[0].resourceId;
      const attended = { 'consent-id': consentId, 'psu-ip-address': '192.0.2.10' };
      before = {
        accountId,
        balances: (
          await callOperation(tpp, 'getBalances', {
            params: { brandId: BRAND, accountId },
            headers: attended,
          })
        ).body,
        transactions: (
          await callOperation(tpp, 'getTransactions', {
            params: { brandId: BRAND, accountId },
            query: { dateFrom: inDays(-90), dateTo: inDays(0) },
            headers: attended,
          })
        ).body,
      };
    } finally {
      await running.stop();
    }

    running = await bankOn(schema, scaPort);
    try {
      const { tpp } = running;
      expect(
        (await callOperation(tpp, 'getConsent', { params: { brandId: BRAND, consentId } })).body,
      ).toMatchObject({ consentStatus: 'valid', access });
      const attended = { 'consent-id': consentId, 'psu-ip-address': '192.0.2.10' };
      const accountParams = { brandId: BRAND, accountId: before.accountId };
      expect(
        (await callOperation(tpp, 'getBalances', { params: accountParams, headers: attended }))
          .body,
      ).toEqual(before.balances);
      const transactions = await callOperation(tpp, 'getTransactions', {
        params: accountParams,
        query: { dateFrom: inDays(-90), dateTo: inDays(0) },
        headers: attended,
      });
      expect(transactions.body).toEqual(before.transactions);
      const booked = (transactions.body?.transactions as { booked: Record<string, unknown>[] })
        .booked;
      expect(booked.at(-1)).toMatchObject({
        remittanceInformationUnstructured: 'Before the restart',
        transactionAmount: { currency: 'HUF', amount: '-12345.00' },
      });
      expect(
        (
          await callOperation(tpp, 'getPaymentStatus', {
            params: { brandId: BRAND, paymentProduct: 'domestic-credit-transfers', paymentId },
          })
        ).body,
      ).toEqual({ transactionStatus: 'ACSC' });

      // The second unattended read of the day is the last one: the count went on from before.
      expect((await read(tpp, 'listAccounts', consentId)).status).toBe(200);
      const third = await read(tpp, 'listAccounts', consentId);
      expect([third.status, tppMessageCode(third)]).toEqual([429, 'ACCESS_EXCEEDED']);

      // The authorisation opened before the restart can still be completed.
      await completeSca(waitingScaHref, { ...alice, decision: 'approve' });
      expect(
        (
          await callOperation(tpp, 'getConsentStatus', {
            params: { brandId: BRAND, consentId: waitingConsentId },
          })
        ).body,
      ).toEqual({ consentStatus: 'valid' });
    } finally {
      await running.stop();
    }
  });

  it('forgets everything, in the store too, on POST /sandbox/reset', async () => {
    let running = await bankOn(schema);
    let consentId: string;
    try {
      const created = await callOperation(running.tpp, 'createConsent', {
        params: { brandId: BRAND },
        headers: REDIRECTS,
        body: { access, recurringIndicator: true, validUntil: inDays(30) },
      });
      consentId = created.body?.consentId as string;
      const reset = await fetch(`${running.sandbox.scaUrl}/sandbox/reset`, { method: 'POST' });
      expect(reset.status).toBe(204);
      const gone = await callOperation(running.tpp, 'getConsent', {
        params: { brandId: BRAND, consentId },
      });
      expect([gone.status, tppMessageCode(gone)]).toEqual([403, 'CONSENT_UNKNOWN']);
      const { rows } = await db.query<{ kind: string }>(`SELECT kind FROM "${schema}".state`);
      expect(rows.map((row) => row.kind)).toEqual(['bank']);
    } finally {
      await running.stop();
    }
    running = await bankOn(schema);
    try {
      const gone = await callOperation(running.tpp, 'getConsent', {
        params: { brandId: BRAND, consentId },
      });
      expect([gone.status, tppMessageCode(gone)]).toEqual([403, 'CONSENT_UNKNOWN']);
    } finally {
      await running.stop();
    }
  });

  it('keeps nothing without a database, as before', async () => {
    let running = await bankOn(undefined);
    let consentId: string;
    try {
      const created = await callOperation(running.tpp, 'createConsent', {
        params: { brandId: BRAND },
        headers: REDIRECTS,
        body: { access, recurringIndicator: true, validUntil: inDays(30) },
      });
      consentId = created.body?.consentId as string;
    } finally {
      await running.stop();
    }
    running = await bankOn(undefined);
    try {
      const gone = await callOperation(running.tpp, 'getConsent', {
        params: { brandId: BRAND, consentId },
      });
      expect(gone.status).toBe(403);
    } finally {
      await running.stop();
    }
  });
});
