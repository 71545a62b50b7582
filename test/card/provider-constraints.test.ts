import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sandboxWalletToken } from '#src/sandbox/card/wallets/wallet-token.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { posCall, posTenant, terminals } from '../support/pos-gateway.js';

type Problem = {
  type: string;
  detail: string;
  errors: { field: string; reason: string }[];
  upstream?: unknown;
};

describe("the provider's constraints, checked by the facade before calling it", () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const link = (expirationDate: string) =>
    sut.app.inject({
      method: 'POST',
      url: '/v1/card/notifications',
      headers: bearer(app.key),
      payload: {
        payeeName: 'Eleni Georgiou',
        payeeEmail: 'eleni@example.com',
        payeePhone: '+306900000001',
        amount: 2500,
        description: 'Invoice 12',
        expirationDate,
      },
    });
  const callsOf = async (operation: string, tenantId = app.tenantId) =>
    (
      (await sut.dataSource.query(
        `SELECT count(*)::int AS n FROM access_log WHERE tenant_id = $1 AND operation = $2`,
        [tenantId, operation],
      )) as { n: number }[]
    )[0].n;
  const calls = () => callsOf('createNotification');

  it("refuses a notification's expirationDate less than 5 minutes ahead, naming the field and the earliest date, without calling the provider", async () => {
    const soon = await link(new Date(Date.now() + 60_000).toISOString());
    expect(soon.statusCode).toBe(400);
    const problem = soon.json<{ type: string; errors: { field: string; reason: string }[] }>();
    expect(problem.type).toBe('urn:portico:problem:validation-failed');
    expect(problem.errors).toEqual([
      {
        field: 'expirationDate',
        reason: expect.stringMatching(/at least 5 minutes .* \d{4}-\d{2}-\d{2}T.*Z or later$/),
      },
    ]);
    expect(await calls()).toBe(0);
    const earliest = /(\d{4}-\S+Z) or later$/.exec(problem.errors[0].reason)![1];

    const taken = await link(new Date(Date.parse(earliest) + 1000).toISOString());
    expect(taken.statusCode).toBe(201);
    expect(taken.json()).toMatchObject({ status: 'Pending', expirationDate: expect.any(String) });
    expect(await calls()).toBe(1);
  });

  const tokenize = (
    authMethod: 'PAN_ONLY' | 'CRYPTOGRAM_3DS',
    payer: Record<string, string> = {},
  ) =>
    sut.app.inject({
      method: 'POST',
      url: '/v1/card/wallets/tokenizations',
      headers: bearer(app.key),
      payload: {
        amount: 1250,
        type: 'webwallet',
        token: sandboxWalletToken({ authMethod, expiresAt: Date.now() + 600_000 }),
        locale: 'en',
        returnUrl: 'https://shop.example/checkout/done',
        ...payer,
      },
    });

  it("refuses a PAN-only wallet token without the payer's email or phone, naming both fields, without calling the provider", async () => {
    const refused = await tokenize('PAN_ONLY');
    expect(refused.statusCode).toBe(400);
    const problem = refused.json<Problem>();
    expect(problem.type).toBe('urn:portico:problem:validation-failed');
    expect(problem.errors).toEqual([
      { field: 'payerEmail', reason: expect.stringMatching(/PAN-only.*payerEmail or payerPhone/) },
      { field: 'payerPhone', reason: expect.stringMatching(/PAN-only.*payerEmail or payerPhone/) },
    ]);
    expect(await callsOf('tokenizeWebWallet')).toBe(0);

    expect((await tokenize('PAN_ONLY', { payerPhone: '+306900000001' })).statusCode).toBe(201);
    expect((await tokenize('CRYPTOGRAM_3DS')).statusCode).toBe(201);
    expect(await callsOf('tokenizeWebWallet')).toBe(2);
  });

  it('refuses a card form with neither the card nor a token, or with both, naming the fields, without calling the provider', async () => {
    const post = (url: string, payload: Record<string, unknown>) =>
      sut.app.inject({ method: 'POST', url, headers: bearer(app.key), payload });
    const card = {
      cardNumber: '5217925525906273',
      expirationYear: String(new Date().getUTCFullYear() + 2),
      expirationMonth: '12',
      holderName: 'Maria P',
    };
    const errorsOf = (reply: Awaited<ReturnType<typeof post>>) => {
      expect(reply.statusCode).toBe(400);
      const problem = reply.json<Problem>();
      expect(problem.type).toBe('urn:portico:problem:validation-failed');
      return problem.errors;
    };
    const neither = [
      {
        field: 'cardNumber',
        reason: expect.stringMatching(
          /required: give one of \(cardNumber, expirationYear.*\) or token$/,
        ),
      },
      {
        field: 'token',
        reason: expect.stringMatching(/required: give one of \(cardNumber.*\) or token$/),
      },
    ];
    expect(errorsOf(await post('/v1/card/customers', {}))).toEqual(neither);
    expect(errorsOf(await post('/v1/card/customers', { fullName: 'No card' }))).toEqual(neither);
    expect(errorsOf(await post('/v1/card/payments', { amount: 1000 }))).toEqual(neither);
    expect(errorsOf(await post('/v1/card/customers', { ...card, token: 'ctn_x' }))).toEqual([
      {
        field: 'token',
        reason: expect.stringMatching(/not allowed with \(cardNumber.*\): give one of them$/),
      },
    ]);
    expect(await callsOf('createCustomer')).toBe(0);
    expect(await callsOf('createPayment')).toBe(0);

    const customer = await post('/v1/card/customers', card);
    expect(customer.statusCode).toBe(201);
    const id = customer.json<{ id: string }>().id;
    expect(errorsOf(await post(`/v1/card/customers/${id}/cards`, {}))).toEqual(neither);
    expect(await callsOf('createCustomerCard')).toBe(0);
  });

  it('refuses an ERP pending list whose range is reversed before the call, and says why a terminal has no pending list', async () => {
    const tenant = await posTenant(sut);
    const [plain] = terminals(sut, tenant);
    const [erp] = terminals(sut, tenant, { erpPendingTransactions: 2 });
    const pending = (terminal: string, query = '') =>
      posCall(sut, tenant, 'GET', `/v1/pos/terminals/${terminal}/pending${query}`);

    const reversed = await pending(erp.token, '?from=2026-11-20&to=2026-11-19');
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json<Problem>().errors).toEqual([
      { field: 'to', reason: expect.stringMatching(/not before from/) },
    ]);
    expect(await callsOf('listPendingPosTransactions', tenant.tenantId)).toBe(0);

    // Not linked to an ERP: the provider's 10003 "Device is not registered", said as the app can act on it.
    const notErp = await pending(plain.token);
    expect(notErp.statusCode).toBe(422);
    const problem = notErp.json<Problem>();
    expect(problem.errors).toEqual([
      { field: 'terminal', reason: expect.stringMatching(/must be linked to an ERP/) },
    ]);
    expect(problem.upstream).toMatchObject({ code: '10003' });

    // An unknown terminal is the provider's plain 10003: nothing of it is Portico's to name.
    const unknown = await pending('trm_unknown1');
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json<Problem>()).toMatchObject({ upstream: { code: '10003' } });
    expect(unknown.json<Problem>().errors).toBeUndefined();

    expect((await pending(erp.token)).json()).toMatchObject({ totalCount: 2 });
  });
});
