import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { MarketplaceInDoubtResolver } from '#src/card/marketplace/marketplace-in-doubt-resolver.service.js';
import { ibanOf } from '../support/marketplace.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const CARD = {
  cardNumber: '5217925525906273',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Ada Lovelace',
  cvv: '123',
};

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('marketplace facade: sellers, transfers, reversals, payouts and balances through the sandbox', () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  let other: { tenantId: string; key: string };
  let merchantId: string;
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
    other = await sut.newTenantWithKey('app');
    // The tenant's marketplace is its merchant at the provider (its sandbox merchant here).
    const [row] = (await sut.dataSource.query(
      'SELECT merchant_id FROM card_credentials WHERE tenant_id = $1',
      [app.tenantId],
    )) as { merchant_id: string }[];
    merchantId = row.merchant_id;
  });
  afterAll(() => sut.close());

  const call = async (
    method: 'GET' | 'POST' | 'PUT',
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
    return {
      status: response.statusCode,
      headers: response.headers,
      body: response.json() as Json,
    };
  };
  const ok = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    payload?: object,
    key = app.key,
  ) => {
    const response = await call(method, url, payload, key);
    const expected = method === 'POST' ? 201 : 200;
    if (response.status !== expected)
      throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  /** A refusal: problem+json with the provider's status and code. */
  const refused = async (
    method: 'POST' | 'PUT' | 'GET',
    url: string,
    payload: object | undefined,
    status: number,
    code: string,
    key = app.key,
  ) => {
    const response = await call(method, url, payload, key);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect({ status: response.status, upstream: response.body.upstream }).toEqual({
      status,
      upstream: expect.objectContaining({ status, code }),
    });
    return response.body;
  };
  const control = async (path: string, body?: object) => {
    const response = await fetch(`${sut.sandbox.scaUrl}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await response.json()) as Json;
  };
  let sellers = 0;
  const seller = async (extra: object = {}, key = app.key) => {
    sellers++;
    return ok(
      'POST',
      '/v1/marketplace/sellers',
      {
        email: `seller${sellers}@shop.example`,
        contactPhone: '+306900000000',
        description: `Seller ${sellers}`,
        business: {
          name: `Business ${sellers}`,
          title: `Business ${sellers} S.A.`,
          taxNumber: `EL${200000000 + sellers}`,
          address: 'Ermou 12, Athens',
        },
        bankAccount: {
          iban: ibanOf('GR', `0110125${String(sellers).padStart(16, '0')}`),
          beneficiaryName: `Business ${sellers}`,
        },
        ...extra,
      },
      key,
    );
  };
  const pay = (amount: number, extra: object = {}, key = app.key) =>
    ok('POST', '/v1/card/payments', { amount, split: 1, ...CARD, ...extra }, key);
  const split = (payment: string, body: object, key = app.key) =>
    ok(
      'POST',
      `/v1/marketplace/payments/${payment}/transfers`,
      { description: 'Order share', ...body },
      key,
    );
  const splitRefused = (
    payment: string,
    body: object,
    status: number,
    code: string,
    key = app.key,
  ) =>
    refused(
      'POST',
      `/v1/marketplace/payments/${payment}/transfers`,
      { description: 'Order share', ...body },
      status,
      code,
      key,
    );
  const today = async () => ((await control('/sandbox/card/clock')).now as string).slice(0, 10);
  const runPayouts = (date: string) =>
    control('/sandbox/card/marketplace/payouts/run', { date, merchantId });

  it('onboards a seller in camelCase with the business nested and the defaults', async () => {
    const created = await seller();
    expect(created).toMatchObject({
      token: expect.stringMatching(/^sel_/),
      status: 'Authorized',
      isAuthorized: true,
      business: { name: 'Business 1', taxNumber: 'EL200000001' },
      bankAccounts: [{ isDefault: true, bankName: 'National Bank of Greece' }],
      payoutInterval: 'daily',
      payoutThresholdAmount: 0,
      payoutsOnHold: false,
      isC2c: null,
    });
    expect(await ok('GET', `/v1/marketplace/sellers/${created.token}`)).toMatchObject({
      token: created.token,
    });
    const listed = await ok('GET', `/v1/marketplace/sellers?taxNumber=EL200000001`);
    expect(listed).toMatchObject({ totalCount: 1, items: [{ token: created.token }] });
  });

  it('refuses a seller without a required field before calling the provider, naming the field', async () => {
    const response = await call('POST', '/v1/marketplace/sellers', { email: 'a@b.example' });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('bankAccount.iban');
  });

  it('takes a seller in the shape it answers: business and bank account nested, payoutFrequency an array', async () => {
    const created = await seller({
      payoutInterval: 'weekly',
      payoutFrequency: ['monday', 'thursday'],
    });
    expect(created).toMatchObject({
      business: {
        name: `Business ${sellers}`,
        title: `Business ${sellers} S.A.`,
        address: 'Ermou 12, Athens',
      },
      bankAccounts: [{ beneficiaryName: `Business ${sellers}`, isDefault: true }],
      payoutInterval: 'weekly',
      payoutFrequency: ['monday', 'thursday'],
    });
    const updated = await ok('PUT', `/v1/marketplace/sellers/${created.token}`, {
      business: { name: 'Renamed' },
      payoutFrequency: created.payoutFrequency,
    });
    expect(updated).toMatchObject({
      business: { name: 'Renamed' },
      payoutFrequency: ['monday', 'thursday'],
    });
    const flat = await call('POST', '/v1/marketplace/sellers', {
      email: 'flat@shop.example',
      businessName: 'Flat',
      payoutFrequency: 'monday,thursday',
    });
    expect(flat.status).toBe(400);
    const fields = (flat.body.errors as { field: string }[]).map((error) => error.field);
    expect(fields).toEqual(expect.arrayContaining(['businessName', 'payoutFrequency']));
  });

  it('passes on the IBAN rule: an IBAN without its beneficiary is the provider 80002', async () => {
    const created = await seller();
    const problem = await refused(
      'PUT',
      `/v1/marketplace/sellers/${created.token}`,
      { bankAccount: { iban: ibanOf('GR', '01401250000000000000999') } },
      400,
      '80002',
    );
    expect(problem.detail).toContain('bank_account_beneficiary');
  });

  it('rule 1: a Pre Authorized payment cannot be split (60010)', async () => {
    const { token: sellerId } = await seller();
    const pre = await pay(3000, { capture: 0 });
    await splitRefused(
      pre.token,
      { seller: sellerId, amount: 1000, commissionAmount: 0 },
      400,
      '60010',
    );
  });

  it('rule 2: a payment with installments cannot be split (60011)', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(9000, { installments: 3, cardNumber: '4908440000000003' });
    await splitRefused(
      paid.token,
      { seller: sellerId, amount: 1000, commissionAmount: 0 },
      400,
      '60011',
    );
  });

  it('rule 3: no split after a full refund (40006)', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(3000);
    await ok('POST', '/v1/card/refunds', { payment: paid.token });
    await splitRefused(
      paid.token,
      { seller: sellerId, amount: 1000, commissionAmount: 0 },
      400,
      '40006',
    );
  });

  it('rule 4: only split=1 payments can be split (60012)', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(3000, { split: 0 });
    await splitRefused(
      paid.token,
      { seller: sellerId, amount: 1000, commissionAmount: 0 },
      400,
      '60012',
    );
  });

  it('rule 5: the commission must be less than the amount (60013)', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(3000);
    await splitRefused(
      paid.token,
      { seller: sellerId, amount: 1000, commissionAmount: 1000 },
      400,
      '60013',
    );
  });

  it('rule 6: above the remaining amount only with the account option and a sufficient balance', async () => {
    // Its own marketplace, so the balance it starts from is known (zero), whatever ran before.
    const own = await sut.newTenantWithKey('app');
    const [row] = (await sut.dataSource.query(
      'SELECT merchant_id FROM card_credentials WHERE tenant_id = $1',
      [own.tenantId],
    )) as { merchant_id: string }[];
    const { token: sellerId } = await seller({}, own.key);
    const paid = await pay(2000, {}, own.key);
    const body = { seller: sellerId, amount: 2500, commissionAmount: 0 };
    await splitRefused(paid.token, body, 400, '60015', own.key);
    await control('/sandbox/card/marketplace/options', {
      merchantId: row.merchant_id,
      transferAboveRemaining: true,
    });
    expect(await ok('GET', '/v1/marketplace/balance', undefined, own.key)).toEqual({
      availableAmount: 0,
      currentAmount: 2000,
    });
    await splitRefused(paid.token, body, 400, '60014', own.key);
    const funding = await pay(10000, {}, own.key);
    await split(
      funding.token,
      { seller: sellerId, amount: 10000, commissionAmount: 1000 },
      own.key,
    );
    expect(await ok('GET', '/v1/marketplace/balance', undefined, own.key)).toEqual({
      availableAmount: 1000,
      currentAmount: 2000,
    });
    const above = await split(paid.token, body, own.key);
    expect(above).toMatchObject({ amount: 2500, additionalAmount: 500 });
    expect(await ok('GET', '/v1/marketplace/balance', undefined, own.key)).toEqual({
      availableAmount: 500,
      currentAmount: 0,
    });
  });

  it('rule 7: a transfer on hold is paid out only once released', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(5000);
    const held = await split(paid.token, {
      seller: sellerId,
      amount: 3000,
      commissionAmount: 300,
      onHold: 1,
    });
    expect(held).toMatchObject({ onHold: true, payout: null, type: 'payment' });
    expect(await ok('GET', `/v1/marketplace/sellers/${sellerId}/balance`)).toEqual({
      availableAmount: 0,
    });
    await runPayouts(await today());
    expect((await ok('GET', `/v1/marketplace/transfers/${held.token}`)).payout).toBeNull();
    await ok('PUT', `/v1/marketplace/transfers/${held.token}`, { onHold: 0 });
    expect(await ok('GET', `/v1/marketplace/sellers/${sellerId}/balance`)).toEqual({
      availableAmount: 2700,
    });
  });

  it('moves funds directly, refuses holds of direct and paid-out transfers, reverses and pays out', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(10000);
    const transfer = await split(paid.token, {
      seller: sellerId,
      amount: 6000,
      commissionAmount: 600,
    });
    const credit = await ok('POST', `/v1/marketplace/sellers/${sellerId}/transfers`, {
      type: 'credit',
      amount: 100,
      description: 'Bonus',
    });
    expect(credit).toMatchObject({ type: 'credit', payment: null, commissionAmount: 0 });
    await refused('PUT', `/v1/marketplace/transfers/${credit.token}`, { onHold: 1 }, 400, '60019');
    const reversal = await ok('POST', '/v1/marketplace/reversals', {
      transfer: transfer.token,
      amount: 1000,
    });
    expect(reversal).toMatchObject({
      amount: 1000,
      commissionAmount: 100,
      transfer: transfer.token,
    });
    await runPayouts(await today());
    const [made] = (await ok('GET', `/v1/marketplace/payouts?seller=${sellerId}`)).items as Json[];
    await refused(
      'PUT',
      `/v1/marketplace/transfers/${transfer.token}`,
      { onHold: 1 },
      400,
      '60018',
    );
    const payout = await ok('GET', `/v1/marketplace/payouts/${made.token}`);
    expect(payout).toMatchObject({
      status: 'Pending',
      isDeposited: false,
      seller: sellerId,
      amount: 5400 + 100 - 900,
      transferAmount: 6100,
      commissionAmount: 600,
      reversalAmount: 1000,
      reversedCommissionAmount: 100,
      transferCount: 2,
      reversalCount: 1,
    });
    const listed = await ok('GET', `/v1/marketplace/transfers?seller=${sellerId}&paidOut=1`);
    expect(listed.totalCount).toBe(2);
    const reversals = await ok('GET', `/v1/marketplace/reversals?transfer=${transfer.token}`);
    expect(reversals).toMatchObject({ totalCount: 1, items: [{ payout: payout.token }] });
    // The next day's run deposits it; the tenant's read keeps the change with its history.
    const next = new Date(Date.parse(`${await today()}T00:00:00Z`) + 86_400_000)
      .toISOString()
      .slice(0, 10);
    expect((await runPayouts(next)).deposited).toContain(payout.token);
    const deposited = await ok('GET', `/v1/marketplace/payouts?seller=${sellerId}&isDeposited=1`);
    expect(deposited).toMatchObject({
      totalCount: 1,
      items: [{ token: payout.token, isDeposited: true }],
    });
    const history = (await sut.dataSource.query(
      `SELECT h.to_status, h.cause FROM status_changes h JOIN provider_resources r ON r.id = h.subject_id
        WHERE r.token = $1 ORDER BY h.id`,
      [payout.token],
    )) as { to_status: string; cause: string }[];
    expect(history.map((h) => h.to_status)).toEqual(['creating', 'Pending', 'Deposited']);
    expect(
      (await control(`/sandbox/card/marketplace/invariants?merchantId=${merchantId}`)).ok,
    ).toBe(true);
  });

  it('records every money movement in the store with its history and access-log rows', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(4000);
    const transfer = await split(paid.token, {
      seller: sellerId,
      amount: 2000,
      commissionAmount: 200,
    });
    const reversal = await ok('POST', '/v1/marketplace/reversals', { transfer: transfer.token });
    const rows = (await sut.dataSource.query(
      `SELECT r.kind, r.status, r.amount, r.parent_token, r.tenant_id FROM provider_resources r
        WHERE r.token = ANY($1) ORDER BY r.created_at`,
      [[transfer.token, reversal.token]],
    )) as Json[];
    expect(rows).toEqual([
      {
        kind: 'transfer',
        status: 'pending',
        amount: 2000,
        parent_token: paid.token,
        tenant_id: app.tenantId,
      },
      {
        kind: 'reversal',
        status: 'pending',
        amount: 2000,
        parent_token: transfer.token,
        tenant_id: app.tenantId,
      },
    ]);
    const calls = (await sut.dataSource.query(
      `SELECT a.operation, a.outcome FROM access_log a JOIN provider_resources r ON r.id = a.card_resource_id
        WHERE r.token = $1 ORDER BY a.id`,
      [transfer.token],
    )) as Json[];
    expect(calls).toEqual([{ operation: 'createPaymentTransfer', outcome: 'ok' }]);
    const history = (await sut.dataSource.query(
      `SELECT h.subject_kind, h.to_status FROM status_changes h JOIN provider_resources r ON r.id = h.subject_id
        WHERE r.token = $1 ORDER BY h.id`,
      [reversal.token],
    )) as Json[];
    expect(history).toEqual([
      { subject_kind: 'card_reversal', to_status: 'creating' },
      { subject_kind: 'card_reversal', to_status: 'pending' },
    ]);
  });

  it('splits once per Idempotency-Key: the retry replays the transfer', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(4000);
    const key = randomUUID();
    const before = sut.sandbox.card.callCounts().createPaymentTransfer ?? 0;
    const body = { seller: sellerId, amount: 1000, commissionAmount: 0, description: 'Once' };
    const url = `/v1/marketplace/payments/${paid.token}/transfers`;
    const first = await call('POST', url, body, app.key, { 'idempotency-key': key });
    const again = await call('POST', url, body, app.key, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((sut.sandbox.card.callCounts().createPaymentTransfer ?? 0) - before).toBe(1);
  });

  it('leaves a split whose answer is lost in doubt, never failed; the resolver finds it and it is never sent twice', async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(4000);
    sut.sandbox.chaos.add({
      operation: 'createPaymentTransfer',
      fault: 'act-then-fail',
      then: 'reset',
      times: 1,
    });
    const before = sut.sandbox.card.callCounts().createPaymentTransfer ?? 0;
    const key = randomUUID();
    const url = `/v1/marketplace/payments/${paid.token}/transfers`;
    const body = { seller: sellerId, amount: 1500, commissionAmount: 150, description: 'Lost' };
    const lost = await call('POST', url, body, app.key, { 'idempotency-key': key });
    expect(lost.status).toBeGreaterThanOrEqual(502);
    const resource = lost.body.resource as string;
    expect(resource).toMatch(/^\/v1\/marketplace\/transfers\/[0-9a-f-]{36}$/);
    // In doubt: the same key is told to come back (409, Retry-After), and sends nothing.
    const again = await call('POST', url, body, app.key, { 'idempotency-key': key });
    expect([again.status, again.headers['retry-after'], again.body.resource]).toEqual([
      409,
      '5',
      resource,
    ]);
    const pending = await call('GET', resource);
    expect([pending.status, pending.body.resourceStatus]).toEqual([409, 'unknown']);
    await sut.app.get(MarketplaceInDoubtResolver).resolveInDoubt(0);
    const settled = await ok('GET', resource);
    expect(settled).toMatchObject({ amount: 1500, commissionAmount: 150, payment: paid.token });
    // Settled: the same key answers the transfer.
    const retried = await call('POST', url, body, app.key, { 'idempotency-key': key });
    expect([retried.status, retried.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(retried.body).toEqual(settled);
    expect((sut.sandbox.card.callCounts().createPaymentTransfer ?? 0) - before).toBe(1);
    const history = (await sut.dataSource.query(
      `SELECT h.to_status, h.cause FROM status_changes h WHERE h.subject_id = $1 ORDER BY h.id`,
      [resource.split('/').pop()],
    )) as Json[];
    expect(history).toEqual([
      { to_status: 'creating', cause: 'created' },
      { to_status: 'unknown', cause: 'upstream-outcome-unknown' },
      { to_status: 'pending', cause: 'found-at-provider' },
    ]);
  });

  it("keeps tenants apart: another tenant's seller, payment, transfer and payout are not found", async () => {
    const { token: sellerId } = await seller();
    const paid = await pay(3000);
    const transfer = await split(paid.token, {
      seller: sellerId,
      amount: 1000,
      commissionAmount: 0,
    });
    for (const url of [
      `/v1/marketplace/sellers/${sellerId}`,
      `/v1/marketplace/sellers/${sellerId}/balance`,
      `/v1/marketplace/transfers/${transfer.token}`,
      `/v1/marketplace/transfers?payment=${paid.token}`,
    ])
      expect([url, (await call('GET', url, undefined, other.key)).status]).toEqual([url, 404]);
    const stolen = await call(
      'POST',
      `/v1/marketplace/payments/${paid.token}/transfers`,
      { seller: sellerId, amount: 100, commissionAmount: 0, description: 'x' },
      other.key,
    );
    expect(stolen.status).toBe(404);
    const reversal = await call(
      'POST',
      '/v1/marketplace/reversals',
      { transfer: transfer.token },
      other.key,
    );
    expect(reversal.status).toBe(404);
    const theirs = await call('GET', '/v1/marketplace/balance', undefined, other.key);
    // One balance shape: the marketplace's and a seller's alike, without the provider's wrapper.
    expect(theirs.body).toEqual({ availableAmount: 0, currentAmount: 0 });
  });
});
