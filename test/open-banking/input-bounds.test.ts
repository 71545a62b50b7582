import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response as InjectResponse } from 'light-my-request';
import { randomUUID } from 'node:crypto';
import { PosContract } from '#src/shared/contracts/pos-contract.js';
import { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';
import { CardContract } from '#src/shared/contracts/card-contract.js';
import type { Schema } from '#src/shared/contracts/openapi-contract.js';
import { approvedConsent } from '../support/consent-flow.js';
import { ALICE_EUR, APP_REDIRECT, consentRequest, domesticPayment } from '../support/fixtures.js';
import { sendOperation } from '../support/sandbox-api.js';
import {
  bankCallCount,
  bearer,
  startTestGateway,
  type TestGateway,
} from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

/** Every facade input that reaches a provider's path, query or header is bounded before any row is written. */
describe("input bounds: the provider's limits, checked by Portico before anything is written", () => {
  let gateway: TestGateway;
  let key: string;
  let tenantId: string;
  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key, tenantId } = await gateway.newTenantWithKey('app'));
  });
  afterAll(() => gateway.close());

  /** What the tenant has in the tables a write or a read under a consent leaves behind. */
  const rowsOfTenant = async () => {
    const count = async (table: string, where = 'true') =>
      Number(
        (
          (await gateway.dataSource.query(
            `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1 AND ${where}`,
            [tenantId],
          )) as { n: number }[]
        )[0].n,
      );
    return {
      consents: await count('consents'),
      payments: await count('payments'),
      accessLog: await count('access_log'),
      // The key keeps the 400 for a replay; a key left in progress would be an outcome in doubt.
      keysInProgress: await count('idempotency_records', `state <> 'completed'`),
      cardResources: await count('provider_resources'),
    };
  };

  /** The request answers 400 naming exactly `field`, the bank sees nothing, and no row is written. */
  const refusedNaming = async (field: string, send: () => Promise<InjectResponse>) => {
    const rowsBefore = await rowsOfTenant();
    const callsBefore = bankCallCount(gateway);
    const answer = await send();
    const body = answer.json<{ status: number; errors?: { field: string }[] }>();
    expect({ status: answer.statusCode, fields: body.errors?.map((e) => e.field) }).toEqual({
      status: 400,
      fields: [field],
    });
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(bankCallCount(gateway)).toBe(callsBefore);
    expect(await rowsOfTenant()).toEqual(rowsBefore);
  };

  const post = (url: string, payload: object) =>
    gateway.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(key), 'idempotency-key': randomUUID() },
      payload,
    });

  const badBrandIds = [
    'b'.repeat(128),
    'b'.repeat(65),
    'danube bank',
    'danube/bank',
    '-danube-bank',
    'dánube-bank',
  ];

  it('refuses a brandId over 64 characters or outside its alphabet on every creation (consent, funds consent, payment)', async () => {
    for (const brandId of badBrandIds) {
      await refusedNaming('brandId', () => post('/v1/consents', consentRequest({ brandId })));
      await refusedNaming('brandId', () =>
        post('/v1/funds-confirmation-consents', {
          brandId,
          account: { iban: ALICE_EUR },
          redirectUri: APP_REDIRECT,
        }),
      );
      await refusedNaming('brandId', () => post('/v1/payments', domesticPayment({ brandId })));
    }
  });

  it('takes a brandId of 64 characters, which the bank refuses as unknown: failed, never in doubt', async () => {
    const answer = await post('/v1/consents', consentRequest({ brandId: 'b'.repeat(64) }));
    expect(answer.statusCode).toBeGreaterThanOrEqual(400);
    expect(answer.statusCode).toBeLessThan(500);
    const rows: { status: string }[] = await gateway.dataSource.query(
      `SELECT status FROM consents WHERE tenant_id = $1 AND brand_id = $2`,
      [tenantId, 'b'.repeat(64)],
    );
    expect(rows).toEqual([{ status: 'failed' }]);
  });

  it('refuses a malformed accountId, transactionId or PSU-IP-Address before the consent is used: no access-log row', async () => {
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const read =
      (url: string, headers: Record<string, string> = {}) =>
      () =>
        gateway.app.inject({
          method: 'GET',
          url,
          headers: { ...bearer(key), 'consent-id': consentId, ...headers },
        });
    for (const bad of ['acc$1', 'a%20b', 'acc%2F1', 'acc%C3%A9'])
      for (const suffix of ['', '/balances', '/transactions?dateFrom=2026-01-01&dateTo=2026-01-31'])
        await refusedNaming('accountId', read(`/v1/accounts/${bad}${suffix}`));
    await refusedNaming(
      'transactionId',
      read(`/v1/accounts/${accountId}/transactions/trx%20${'1'.repeat(20)}`),
    );
    // Node's isIP takes an IPv6 zone of any length; the bank takes 45 characters of [0-9A-Fa-f:.].
    for (const ip of [`fe80::1%${'a'.repeat(60)}`, 'fe80::1%eth0'])
      await refusedNaming(
        'header:PSU-IP-Address',
        read(`/v1/accounts/${accountId}/balances`, { 'psu-ip-address': ip }),
      );
    // Well-formed values are still served.
    const served = await read(`/v1/accounts/${accountId}/balances`, {
      'psu-ip-address': '2001:db8::1',
    })();
    expect(served.statusCode).toBe(200);
  });

  it('refuses card and POS ids beyond what card.yaml and pos.yaml allow, naming them', async () => {
    const get = (url: string) => () =>
      gateway.app.inject({ method: 'GET', url, headers: bearer(key) });
    for (const bad of ['c'.repeat(65), 'cus.1', 'cus%201'])
      await refusedNaming('customerId', get(`/v1/card/customers/${bad}`));
    await refusedNaming('paymentId', get(`/v1/card/payments/${'p'.repeat(65)}`));
    await refusedNaming('id', get(`/v1/card/tokens/${'t'.repeat(65)}`));
    await refusedNaming('terminal', get(`/v1/pos/terminals/trm_${'x'.repeat(61)}/pending`));
    await refusedNaming('transactionId', get(`/v1/pos/transactions/${randomUUID()}x`));
  });
});

describe('the upstream contracts bound every path, query and header parameter', () => {
  /** A string parameter has a maximum length and an alphabet (pattern, format or enumeration). */
  function unbounded(schema: Schema, resolve: (ref: string) => Schema): string | undefined {
    const own = schema.$ref ? resolve(schema.$ref as string) : schema;
    if (own.enum) return undefined;
    if (own.type === 'integer' || own.type === 'number')
      return own.maximum === undefined ? 'no maximum' : undefined;
    if (own.type === 'boolean') return undefined;
    if (own.type !== 'string') return `type ${String(own.type)}`;
    if (own.maxLength === undefined) return 'no maxLength';
    if (!own.pattern && !own.format) return 'no pattern or format';
    return undefined;
  }

  it('in psd2.yaml, card.yaml and pos.yaml', () => {
    const found: string[] = [];
    for (const contract of [new Psd2Contract(), new CardContract(), new PosContract()]) {
      const resolve = (ref: string) =>
        ref
          .replace(/^#\//, '')
          .split('/')
          .reduce<Schema>((node, part) => node[part] as Schema, contract.document);
      for (const operation of contract.operations)
        for (const parameter of operation.parameters) {
          if (parameter.in === 'cookie') continue;
          const why = unbounded(parameter.schema ?? {}, resolve);
          if (why)
            found.push(`${contract.name} ${operation.operationId} ${parameter.name}: ${why}`);
        }
    }
    expect(found).toEqual([]);
  });
});

describe('the sandbox bank answers an over-long path id with its documented 400, never 414', () => {
  it('FORMAT_ERROR naming the parameter, for a brandId and a consentId', async () => {
    const { startSandbox } = await import('#src/sandbox/sandbox.js');
    const sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
    const tpp = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    try {
      const brand = await sendOperation(tpp, 'createConsent', {
        params: { brandId: 'b'.repeat(128) },
        headers: { 'tpp-redirect-uri': 'https://tpp.example/ok' },
        body: {
          access: { accounts: [] },
          recurringIndicator: false,
          validUntil: '2099-01-01',
        },
      });
      const consent = await sendOperation(tpp, 'getConsentStatus', {
        params: { brandId: 'danube-bank', consentId: 'c'.repeat(101) },
      });
      for (const [answer, path] of [
        [brand, 'path.brandId'],
        [consent, 'path.consentId'],
      ] as const) {
        expect(answer.status).toBe(400);
        expect(
          (answer.body as { tppMessages: { code: string; path: string }[] }).tppMessages,
        ).toEqual([expect.objectContaining({ code: 'FORMAT_ERROR', path })]);
      }
    } finally {
      await tpp.close();
      await sandbox.close();
    }
  });
});
