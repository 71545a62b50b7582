import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import { sandboxWalletToken } from '#src/sandbox/card/wallets/wallet-token.js';
import { signIrisJson } from '#src/shared/iris/iris-hash.js';
import { formOf, page } from '../support/card-pages.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

type Tokenization = {
  id: string;
  status: string;
  flow: string | null;
  cardToken: string | null;
  form: string | null;
  amount: number;
  md: string;
  paymentId: string | null;
};
type Problem = { type: string; status: number; upstream?: { code?: string }; errors?: unknown[] };
type Domains = { totalCount: number; items: { domainName: string; dateCreated: string }[] };

const RETURN_URL = 'https://shop.example/checkout/done';
const wallet = (authMethod: 'CRYPTOGRAM_3DS' | 'PAN_ONLY', minutes = 10) =>
  sandboxWalletToken({ authMethod, expiresAt: Date.now() + minutes * 60_000 });

/**
 * The wallet facade against the sandbox: Portico tokenises with the tenant's public key, verifies the
 * provider's signed card token before the app may charge it (once), takes the PAN-only result through
 * the payer's browser, refuses forged results and unverified card tokens without calling the provider,
 * keeps every tenant to its own, and registers, lists and deletes device-wallet domains.
 */
describe('card facade: wallets', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  let other: { tenantId: string; key: string };

  beforeAll(async () => {
    sut = await startTestGateway({}, [], { listen: true });
    app = await sut.newTenantWithKey('app');
    other = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const call = async <T = Record<string, unknown>>(
    method: 'GET' | 'POST',
    url: string,
    payload?: object,
    key = app.key,
    headers: Record<string, string> = {},
  ) => {
    const response = await sut.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...headers },
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: response.json() as T };
  };
  const tokenize = (body: Record<string, unknown> = {}, key = app.key) =>
    call<Tokenization & Problem>(
      'POST',
      '/v1/card/wallets/tokenizations',
      {
        amount: 1250,
        type: 'webwallet',
        token: wallet('CRYPTOGRAM_3DS'),
        md: 'order-88',
        locale: 'en',
        returnUrl: RETURN_URL,
        ...body,
      },
      key,
    );
  const charge = (token: string, key = app.key, amount = 1250) =>
    call<Record<string, unknown> & Problem>('POST', '/v1/card/payments', { token, amount }, key);
  const providerCalls = (operationId: string) => sut.sandbox.card.callCounts()[operationId] ?? 0;
  const history = async (id: string) =>
    (
      (await sut.dataSource.query(
        'SELECT subject_kind, to_status, cause FROM status_changes WHERE subject_id = $1 ORDER BY id',
        [id],
      )) as { subject_kind: string; to_status: string; cause: string }[]
    ).map((row) => `${row.subject_kind}:${row.to_status}:${row.cause}`);

  it('cryptogram flow: verified with the public key, charged once through the facade, a second charge refused without the provider', async () => {
    const created = await tokenize();
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'verified',
      flow: 'direct',
      amount: 1250,
      md: 'order-88',
    });
    const cardToken = created.body.cardToken as string;
    expect(cardToken).toMatch(/^ctn_/);

    const paid = await charge(cardToken);
    expect(paid.status).toBe(201);
    expect(paid.body).toMatchObject({ status: 'Captured', amount: 1250 });
    const read = await call<Tokenization>(
      'GET',
      `/v1/card/wallets/tokenizations/${created.body.id}`,
    );
    expect(read.body).toMatchObject({ status: 'charged', paymentId: paid.body.token });

    const before = providerCalls('createPayment');
    const again = await charge(cardToken);
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('urn:portico:problem:wallet-token-used');
    expect(providerCalls('createPayment')).toBe(before);

    expect(await history(created.body.id)).toEqual([
      'wallet_token:creating:created',
      'wallet_token:verified:signature-valid:answer',
      'wallet_token:charged:payment-created',
    ]);
    const calls = (await sut.dataSource.query(
      'SELECT operation, outcome FROM access_log WHERE card_resource_id = $1 ORDER BY id',
      [created.body.id],
    )) as { operation: string; outcome: string }[];
    expect(calls).toEqual([{ operation: 'tokenizeWebWallet', outcome: 'ok' }]);
    // The auditor sees the same trail.
    const auditor = (await sut.newTenantWithKey('auditor')).key;
    const audited = await call<{ kind: string; history: unknown[]; accessLog: unknown[] }>(
      'GET',
      `/v1/audit/card-resources/${created.body.id}`,
      undefined,
      auditor,
    );
    expect(audited.status).toBe(200);
    expect(audited.body).toMatchObject({
      kind: 'wallet_token',
      history: [
        { from: null, to: 'creating' },
        { from: 'creating', to: 'verified' },
        { from: 'verified', to: 'charged' },
      ],
      accessLog: [{ operation: 'tokenizeWebWallet' }],
    });
  });

  it('the provider gets Portico’s own callback_url (an unguessable reference) and Portico’s id as uuid', async () => {
    const created = await tokenize();
    const book = sut.sandbox.card.merchantBook(
      [...sut.sandbox.card.merchantIds()].find((id) =>
        [...(sut.sandbox.card.merchantBook(id)?.wallets.values() ?? [])].some(
          (w) => w.uuid === created.body.id,
        ),
      ) as string,
    );
    const record = [...book!.wallets.values()].find((w) => w.uuid === created.body.id)!;
    expect(record.callbackUrl).toMatch(
      new RegExp(`^${sut.baseUrl}/v1/card/wallets/callback/[A-Za-z0-9_-]{43}$`),
    );
    expect(record.md).toBe('order-88');
  });

  it('is created once per Idempotency-Key', async () => {
    const headers = { 'idempotency-key': randomUUID() };
    const body = {
      amount: 900,
      type: 'webwallet',
      token: wallet('CRYPTOGRAM_3DS'),
      returnUrl: RETURN_URL,
    };
    const before = providerCalls('tokenizeWebWallet');
    const first = await call<Tokenization>(
      'POST',
      '/v1/card/wallets/tokenizations',
      body,
      app.key,
      headers,
    );
    const second = await call<Tokenization>(
      'POST',
      '/v1/card/wallets/tokenizations',
      body,
      app.key,
      headers,
    );
    expect(second).toEqual(first);
    expect(providerCalls('tokenizeWebWallet')).toBe(before + 1);
  });

  it('PAN-only flow: the payer completes the provider’s form, Portico verifies the result at its callback and redirects to returnUrl', async () => {
    const created = await tokenize({ token: wallet('PAN_ONLY'), payerEmail: 'payer@example.com' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'pending', flow: 'form', cardToken: null });
    // Not chargeable yet: nothing verified.
    const checkout = formOf(created.body.form as string);
    const shown = await page(checkout.action, checkout.fields);
    expect(shown.status).toBe(200);
    const authenticate = formOf(shown.html);
    const back = await page(new URL(authenticate.action, checkout.action).toString(), {});
    const result = formOf(back.html);
    expect(result.action.startsWith(`${sut.baseUrl}/v1/card/wallets/callback/`)).toBe(true);
    const returned = await request(result.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(result.fields).toString(),
    });
    await returned.body.text();
    expect(returned.statusCode).toBe(303);
    const location = new URL(returned.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(RETURN_URL);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      walletTokenization: created.body.id,
      status: 'verified',
    });
    const read = await call<Tokenization>(
      'GET',
      `/v1/card/wallets/tokenizations/${created.body.id}`,
    );
    expect(read.body).toMatchObject({
      status: 'verified',
      cardToken: result.fields.token,
      form: null,
    });
    expect((await charge(result.fields.token)).status).toBe(201);
    expect((await charge(result.fields.token)).status).toBe(409);
  });

  it('a PAN-only tokenisation whose payer did not come back within 15 minutes is expired, and a late result is refused', async () => {
    const created = await tokenize({ token: wallet('PAN_ONLY'), payerEmail: 'payer@example.com' });
    const checkout = formOf(created.body.form as string);
    const shown = await page(checkout.action, checkout.fields);
    const back = await page(new URL(formOf(shown.html).action, checkout.action).toString(), {});
    const late = formOf(back.html);
    await sut.dataSource.query(
      "UPDATE provider_resources SET created_at = now() - interval '16 minutes' WHERE id = $1",
      [created.body.id],
    );
    const read = await call<Tokenization>(
      'GET',
      `/v1/card/wallets/tokenizations/${created.body.id}`,
    );
    expect(read.body).toMatchObject({ status: 'expired', cardToken: null, form: null });
    const response = await request(late.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(late.fields).toString(),
    });
    await response.body.text();
    expect(response.statusCode).toBe(409);
    expect((await charge(late.fields.token)).status).toBe(409);
  });

  it('a forged PAN-only result is refused (401), records nothing and is logged as a security event without the hash', async () => {
    const created = await tokenize({ token: wallet('PAN_ONLY'), payerPhone: '+306900000001' });
    const checkout = formOf(created.body.form as string);
    const shown = await page(checkout.action, checkout.fields);
    const back = await page(new URL(formOf(shown.html).action, checkout.action).toString(), {});
    const genuine = formOf(back.html);
    const json = JSON.stringify({
      callback_url: genuine.action,
      token: genuine.fields.token,
      md: 'order-88',
    });
    const forged = signIrisJson('sk_sandbox_not_the_merchants_key', json);
    const altered = Buffer.from(
      Buffer.from(genuine.fields.hash, 'base64').toString('utf8').replace('order-88', 'order-99'),
    ).toString('base64');
    for (const hash of [forged, altered]) {
      const response = await request(genuine.action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...genuine.fields, hash }).toString(),
      });
      expect(response.statusCode).toBe(401);
      await response.body.text();
    }
    const read = await call<Tokenization>(
      'GET',
      `/v1/card/wallets/tokenizations/${created.body.id}`,
    );
    expect(read.body).toMatchObject({ status: 'pending', cardToken: null });
    const lines = sut.logs.filter((line) => line.includes('"security":"wallet-'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const all = sut.logs.join('\n');
    expect(all).not.toContain(forged);
    expect(all).not.toContain(genuine.fields.hash);
    const keys = await sut.app.get(CardCredentialsService).keysOf(app.tenantId);
    expect(all).not.toContain(keys.secretKey);
  });

  it('a genuine result posted to another tokenisation’s callback is refused (401); at its own it is taken', async () => {
    const pan = () => tokenize({ token: wallet('PAN_ONLY'), payerEmail: 'payer@example.com' });
    const a = (await pan()).body;
    const b = (await pan()).body;
    const checkout = formOf(a.form as string);
    const shown = await page(checkout.action, checkout.fields);
    const back = await page(new URL(formOf(shown.html).action, checkout.action).toString(), {});
    const genuine = formOf(back.html);
    const callbackOfB = [...sut.sandbox.card.merchantIds()]
      .flatMap((id) => [...(sut.sandbox.card.merchantBook(id)?.wallets.values() ?? [])])
      .find((w) => w.uuid === b.id)?.callbackUrl as string;
    const post = async (url: string) => {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(genuine.fields).toString(),
      });
      await response.body.text();
      return response.statusCode;
    };
    expect(await post(callbackOfB)).toBe(401);
    expect(
      sut.logs.some((line) => line.includes('"security":"wallet-message-of-another-tokenization"')),
    ).toBe(true);
    const readB = await call<Tokenization>('GET', `/v1/card/wallets/tokenizations/${b.id}`);
    expect(readB.body).toMatchObject({ status: 'pending', cardToken: null });
    expect(await post(genuine.action)).toBe(303);
    // The same genuine result again is answered as before.
    expect(await post(genuine.action)).toBe(303);
  });

  it('a cryptogram answer whose hash is not signed with the tenant’s secret key is rejected, and its card token is refused without the provider', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const credentials = sut.app.get(CardCredentialsService);
    const keys = await credentials.keysOf(tenant.tenantId);
    // The tenant's stored secret key is not the one the provider signs with: every hash looks altered.
    await credentials.set(tenant.tenantId, {
      ...keys,
      secretKey: 'sk_sandbox_another_merchants_key',
    });
    const created = await tokenize({}, tenant.key);
    // The provider took the call (made with the public key) and answered; Portico refused its signature.
    expect(created.status).toBe(502);
    expect(created.body.type).toBe('urn:portico:problem:upstream-failed');
    const [row] = (await sut.dataSource.query(
      "SELECT id, token, status FROM provider_resources WHERE tenant_id = $1 AND kind = 'wallet_token'",
      [tenant.tenantId],
    )) as { id: string; token: string; status: string }[];
    expect(row.status).toBe('rejected');
    expect(row.token).toMatch(/^ctn_/);
    const before = providerCalls('createPayment');
    const refused = await charge(row.token, tenant.key);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe('urn:portico:problem:wallet-token-not-verified');
    expect(providerCalls('createPayment')).toBe(before);
    expect(sut.logs.some((line) => line.includes('"security":"wallet-hash-invalid"'))).toBe(true);
  });

  it('an expired wallet token is the provider’s 400 20026; the tokenisation failed', async () => {
    const created = await tokenize({ token: wallet('CRYPTOGRAM_3DS', -1) });
    expect(created.status).toBe(400);
    expect(created.body.type).toBe('urn:portico:problem:upstream-refused');
    expect(created.body.upstream?.code).toBe('20026');
    const [row] = (await sut.dataSource.query(
      "SELECT status FROM provider_resources WHERE tenant_id = $1 AND kind = 'wallet_token' ORDER BY created_at DESC LIMIT 1",
      [app.tenantId],
    )) as { status: string }[];
    expect(row.status).toBe('failed');
  });

  it('validates the body against card.yaml, naming the camelCase field; Portico’s own fields cannot be sent', async () => {
    const refused = await tokenize({
      currency: 'USD',
      md: 'x'.repeat(256),
      callbackUrl: 'https://evil.example/',
    });
    expect(refused.status).toBe(400);
    const fields = (refused.body.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['callbackUrl', 'currency', 'md']);
    const noReturn = await call<Problem>('POST', '/v1/card/wallets/tokenizations', {
      amount: 1250,
      type: 'webwallet',
      token: wallet('CRYPTOGRAM_3DS'),
    });
    expect((noReturn.body.errors as { field: string }[]).map((e) => e.field)).toEqual([
      'returnUrl',
    ]);
  });

  it('keeps tenants apart: another tenant’s tokenisation and card token are 404 without a provider call', async () => {
    const created = await tokenize();
    const read = await call(
      'GET',
      `/v1/card/wallets/tokenizations/${created.body.id}`,
      undefined,
      other.key,
    );
    expect(read.status).toBe(404);
    const before = providerCalls('createPayment');
    const stolen = await charge(created.body.cardToken as string, other.key);
    expect(stolen.status).toBe(404);
    expect(providerCalls('createPayment')).toBe(before);
    expect((await charge(created.body.cardToken as string)).status).toBe(201);
  });

  it('device-wallet domains: register, list, delete with reason (history and audit), per tenant, admin too', async () => {
    const admin = await sut.tenants.issueKey(app.tenantId, 'admin');
    const registered = await call<Domains>(
      'POST',
      '/v1/card/wallets/domains',
      { domainNames: ['Shop.example', 'pay.shop.example'] },
      app.key,
      { 'idempotency-key': randomUUID() },
    );
    expect(registered.status).toBe(200);
    expect(registered.body.items.map((d) => d.domainName)).toEqual([
      'shop.example',
      'pay.shop.example',
    ]);
    const listed = await call<Domains>('GET', '/v1/card/wallets/domains', undefined, admin.key);
    expect(listed.body).toEqual(registered.body);
    expect(
      (await call<Domains>('GET', '/v1/card/wallets/domains', undefined, other.key)).body
        .totalCount,
    ).toBe(0);

    const deleted = await call<Domains>(
      'POST',
      '/v1/card/wallets/domains/deletions',
      { domainNames: ['shop.example'], reason: 'The shop moved' },
      admin.key,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.items.map((d) => d.domainName)).toEqual(['pay.shop.example']);
    const [row] = (await sut.dataSource.query(
      "SELECT id, status, data FROM provider_resources WHERE tenant_id = $1 AND kind = 'wallet_domain' AND token = 'shop.example'",
      [app.tenantId],
    )) as { id: string; status: string; data: { deletion_reason?: string } }[];
    expect(row.status).toBe('deleted');
    expect(row.data.deletion_reason).toBe('The shop moved');
    expect(await history(row.id)).toEqual([
      'wallet_domain:creating:created',
      'wallet_domain:registered:upstream-registered',
      'wallet_domain:deleted:deleted-by-app',
    ]);
    const calls = (await sut.dataSource.query(
      'SELECT operation FROM access_log WHERE card_resource_id = $1 ORDER BY id',
      [row.id],
    )) as { operation: string }[];
    expect(calls.map((c) => c.operation)).toEqual([
      'registerDeviceWalletDomains',
      'deleteDeviceWalletDomains',
    ]);

    const unknown = await call<Problem>('POST', '/v1/card/wallets/domains/deletions', {
      domainNames: ['never.example'],
      reason: 'x',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.upstream?.code).toBe('80002');
    const noReason = await call<Problem>('POST', '/v1/card/wallets/domains/deletions', {
      domainNames: ['pay.shop.example'],
    });
    expect(noReason.status).toBe(400);
    expect((noReason.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['reason']);
  });

  it('a lost answer leaves a tokenisation unknown (never chargeable) and new domains unknown until the list settles them', async () => {
    const tenant = await sut.newTenantWithKey('app');
    sut.sandbox.chaos.add({
      operation: 'tokenizeWebWallet',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const lost = await tokenize({}, tenant.key);
    expect(lost.status).toBe(502);
    const [row] = (await sut.dataSource.query(
      "SELECT id, status, token FROM provider_resources WHERE tenant_id = $1 AND kind = 'wallet_token'",
      [tenant.tenantId],
    )) as { id: string; status: string; token: string | null }[];
    expect(row).toMatchObject({ status: 'unknown', token: null });

    sut.sandbox.chaos.add({
      operation: 'registerDeviceWalletDomains',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const register = await call<Problem>(
      'POST',
      '/v1/card/wallets/domains',
      { domainNames: ['doubt.example'] },
      tenant.key,
    );
    expect(register.status).toBe(502);
    const status = async () =>
      (
        (await sut.dataSource.query(
          "SELECT status FROM provider_resources WHERE tenant_id = $1 AND kind = 'wallet_domain'",
          [tenant.tenantId],
        )) as { status: string }[]
      ).map((r) => r.status);
    expect(await status()).toEqual(['unknown']);
    const listed = await call<Domains>('GET', '/v1/card/wallets/domains', undefined, tenant.key);
    expect(listed.body.items.map((d) => d.domainName)).toEqual(['doubt.example']);
    expect(await status()).toEqual(['registered']);
  });

  it('a domain registration is sent once per Idempotency-Key', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const headers = { 'idempotency-key': randomUUID() };
    const before = providerCalls('registerDeviceWalletDomains');
    const body = { domainNames: ['once.example'] };
    const first = await call('POST', '/v1/card/wallets/domains', body, tenant.key, headers);
    const second = await call('POST', '/v1/card/wallets/domains', body, tenant.key, headers);
    expect(second).toEqual(first);
    expect(providerCalls('registerDeviceWalletDomains')).toBe(before + 1);
  });
});
