import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { verifyIrisHash } from '#src/shared/iris/iris-hash.js';
import { Receiver } from '../../webhooks/receiver.js';
import { CardSandboxClient, type Merchant } from '../../support/card-api.js';
import { formOf, page } from '../../support/card-pages.js';
import { IrisPayer, type IrisSession } from '../../support/iris-flow.js';

type Payment = { token: string; status: string; amount: number; card: unknown };

describe('sandbox card API: bank payments (IRIS)', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  let receiver: Receiver;
  let payer: IrisPayer;
  const callbackUrl = () => `${receiver.url}/callback`;
  const webhookUrl = () => `${receiver.url}/webhook`;
  const webhooks = () =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);

  const create = async (form: Record<string, unknown> = {}) =>
    (
      await client.call<IrisSession>('createIrisSession', {
        key: merchant.secretKey,
        form: {
          amount: 1500,
          currency: 'EUR',
          country: 'GR',
          callback_url: callbackUrl(),
          webhook_url: webhookUrl(),
          md: 'order-17',
          ...form,
        },
      })
    ).body;
  const session = async (token: string) => {
    const [found] = [
      ...client.sandbox.card.merchantBook(merchant.merchantId)!.irisSessions.values(),
    ].filter((record) => record.token === token);
    return found;
  };

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Acme Shop');
    receiver = await Receiver.start();
    payer = new IrisPayer(client, merchant);
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.behaviour = () => 200;
  });
  afterAll(async () => {
    await receiver.close();
    await client.close();
  });

  it('creates a session: src_ token, signature, status created, the seed fields', async () => {
    const created = await create({ uuid: 'a1b2c3' });
    expect(created).toMatchObject({
      uuid: 'a1b2c3',
      md: 'order-17',
      amount: 1500,
      status: 'created',
      debtorBankUrl: null,
      authorisationRequestId: null,
      initiatedAt: null,
      expiresAt: null,
    });
    expect(created.token).toMatch(/^src_/);
    expect(created.signature).toMatch(/^[A-Za-z0-9+/=]+$/);
    const generated = await create();
    expect(generated.uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a currency other than EUR, a country not alpha-2, no callback_url, md over 255, a reused uuid', async () => {
    const key = merchant.secretKey;
    const form = { amount: 1500, currency: 'EUR', country: 'GR', callback_url: callbackUrl() };
    await client.refused(
      'createIrisSession',
      { key, form: { ...form, currency: 'USD' } },
      400,
      40003,
    );
    const country = await client.refused(
      'createIrisSession',
      { key, form: { ...form, country: 'Greece' } },
      400,
      80002,
    );
    expect(country.body.error.message).toContain('country');
    const { callback_url: _omitted, ...noCallback } = form;
    await client.refused('createIrisSession', { key, form: noCallback }, 400, 10006);
    await client.refused(
      'createIrisSession',
      { key, form: { ...form, callback_url: 'not a url' } },
      400,
      10006,
    );
    await client.refused(
      'createIrisSession',
      { key, form: { ...form, md: 'm'.repeat(256) } },
      400,
      80002,
    );
    expect((await create({ md: 'm'.repeat(255) })).md).toHaveLength(255);
    await create({ uuid: 'taken-uuid' });
    const reused = await client.refused(
      'createIrisSession',
      { key, form: { ...form, uuid: 'taken-uuid' } },
      400,
      80002,
    );
    expect(reused.body.error.message).toContain('uuid');
    await client.refused('createIrisSession', { key: merchant.publicKey, form }, 401, 10003);
  });

  it('answers the payform with the public key in the body and no Authorization: a form to the bank page', async () => {
    const created = await create();
    const payload = formOf(await payer.payform(created));
    expect(payload.fields).toEqual({
      callback_url: callbackUrl(),
      md: 'order-17',
      pk: merchant.publicKey,
    });
    expect((await session(created.token))?.status).toBe('initiated');
    const form = { amount: 1500, token: created.signature, currency: 'EUR' };
    await client.refused(
      'createIrisPayform',
      { key: null, form: { ...form, pk: 'pk_unknown' } },
      401,
      10000,
    );
    await client.refused(
      'createIrisPayform',
      { key: null, form: { ...form, pk: merchant.secretKey } },
      401,
      10000,
    );
    await client.refused(
      'createIrisPayform',
      { key: null, form: { ...form, pk: merchant.publicKey, token: 'c2lnbmF0dXJl' } },
      404,
      10002,
    );
    const amount = await client.refused(
      'createIrisPayform',
      { key: null, form: { ...form, pk: merchant.publicKey, amount: 1600 } },
      400,
      80002,
    );
    expect(amount.body.error.message).toContain('amount');
  });

  it('approved: the callback form and the webhook carry token, md and a hash signed with the secret key', async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-callback');
    const returned = await payer.decide(created, 'approve');
    const callback = formOf(returned.html);
    expect(callback.action).toBe(callbackUrl());
    expect(callback.fields).toMatchObject({ token: created.token, md: 'order-17', type: 'iris' });
    expect(verifyIrisHash(merchant.secretKey, callback.fields.hash)).toEqual({
      callback_url: callbackUrl(),
      token: created.token,
      md: 'order-17',
      type: 'iris',
    });
    expect(verifyIrisHash('sk_another', callback.fields.hash)).toBeUndefined();
    expect(webhooks()).toEqual([
      { token: created.token, md: 'order-17', hash: callback.fields.hash },
    ]);
    expect(receiver.received[0].headers['content-type']).toContain('application/json');
    expect((await session(created.token))?.status).toBe('authorized');
  });

  it('pays once from the source; the second payment is 400 41001', async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-only');
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { token: created.token, amount: 1500 } },
      400,
      40001,
    );
    await payer.decide(created, 'approve');
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { token: created.token, amount: 1600 } },
      400,
      40029,
    );
    const first = await client.call<Payment>('createPayment', {
      key: merchant.secretKey,
      form: { token: created.token, amount: 1500 },
    });
    expect(first.body).toMatchObject({ status: 'Captured', amount: 1500, card: null });
    const second = await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { token: created.token, amount: 1500 } },
      400,
      41001,
    );
    expect(second.body.error.message).toContain(created.token);
    expect((await session(created.token))?.status).toBe('captured');
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { token: 'src_unknown', amount: 1500 } },
      404,
      10002,
    );
  });

  it('refused at the bank: failure callback and signed failure webhook, and the source cannot pay', async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-callback');
    const returned = await payer.decide(created, 'refuse');
    const callback = formOf(returned.html);
    expect(callback.fields).toMatchObject({
      error_status: '402',
      error_code: '40004',
      error_message: 'Payment was declined by issuer bank.',
      md: 'order-17',
    });
    expect(callback.fields.token).toBeUndefined();
    expect(verifyIrisHash(merchant.secretKey, callback.fields.hash)).toMatchObject({
      md: 'order-17',
      error_code: 40004,
    });
    expect(webhooks()).toEqual([
      {
        md: 'order-17',
        hash: callback.fields.hash,
        error_status: 402,
        error_code: 40004,
        error_message: 'Payment was declined by issuer bank.',
      },
    ]);
    expect((await session(created.token))?.status).toBe('failed');
    await client.refused(
      'createPayment',
      { key: merchant.secretKey, form: { token: created.token, amount: 1500 } },
      400,
      40001,
    );
  });

  it('cancelled by the payer: error 41002, session cancelled', async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-only');
    await payer.decide(created, 'cancel');
    expect(webhooks()[0]).toMatchObject({ error_status: 400, error_code: 41002 });
    expect((await session(created.token))?.status).toBe('cancelled');
  });

  it('callback then webhook: the webhook waits for the release, the callback page comes first', async () => {
    const created = await create();
    await payer.plan(created.token, 'callback-webhook');
    const returned = await payer.decide(created, 'approve');
    expect(formOf(returned.html).fields.token).toBe(created.token);
    expect(receiver.received).toHaveLength(0);
    expect(await payer.release(created.token)).toBe(true);
    await receiver.until(() => receiver.received.length === 1);
    expect(webhooks()[0].token).toBe(created.token);
    expect(await payer.release(created.token)).toBe(false);
  });

  it('webhook only: the payer never comes back, the webhook is sent', async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-only');
    const returned = await payer.decide(created, 'approve');
    expect(returned.html).toContain('id="iris-done"');
    expect(returned.html).not.toContain('<form');
    expect(webhooks()).toHaveLength(1);
  });

  it('duplicates: copies=3 sends the webhook three times and the callback page posts three times', async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-callback', 3);
    const returned = await payer.decide(created, 'approve');
    expect(webhooks()).toHaveLength(3);
    expect(new Set(webhooks().map((w) => w.hash)).size).toBe(1);
    expect(returned.html).toContain('copy < 3');
    const badPlan = await client.control(
      'PUT',
      `/sandbox/card/iris/sessions/${created.token}/delivery`,
      {
        order: 'webhook-only',
        copies: 4,
      },
    );
    expect(badPlan.status).toBe(400);
  });

  it("without a per-session webhook_url the merchant's registered webhook is used, and with neither none is sent", async () => {
    const registered = await client.control(
      'PUT',
      `/sandbox/card/merchants/${merchant.merchantId}/webhook`,
      { url: `${receiver.url}/registered` },
    );
    expect(registered.status).toBe(204);
    const created = await create({ webhook_url: undefined });
    await payer.plan(created.token, 'webhook-only');
    await payer.decide(created, 'approve');
    expect(webhooks()).toEqual([expect.objectContaining({ token: created.token })]);
    await client.control('PUT', `/sandbox/card/merchants/${merchant.merchantId}/webhook`, {
      url: null,
    });
    receiver.received.length = 0;
    const silent = await create({ webhook_url: undefined });
    await payer.plan(silent.token, 'webhook-only');
    await payer.decide(silent, 'approve');
    expect(receiver.received).toHaveLength(0);
    expect(await payer.webhookAttempts(silent.token)).toEqual([]);
  });

  it('retries a webhook that is not answered 2xx', async () => {
    receiver.behaviour = (_request, _seen) => (receiver.received.length === 1 ? 500 : 200);
    const created = await create();
    await payer.plan(created.token, 'webhook-only');
    await payer.decide(created, 'approve');
    await receiver.until(() => receiver.received.length === 2);
    expect((await payer.webhookAttempts(created.token)).map((a) => a.status)).toEqual([500, 200]);
  });

  it('a session not authorized within 15 minutes is expired and its form refused', async () => {
    const created = await create();
    await client.advanceClock(16 * 60);
    await client.refused(
      'createIrisPayform',
      {
        key: null,
        form: { amount: 1500, pk: merchant.publicKey, token: created.signature, currency: 'EUR' },
      },
      400,
      80002,
    );
    expect((await session(created.token))?.status).toBe('expired');
  });

  it("keeps one merchant's sources from another", async () => {
    const created = await create();
    await payer.plan(created.token, 'webhook-only');
    await payer.decide(created, 'approve');
    const other = await client.merchant();
    await client.refused(
      'createPayment',
      { key: other.secretKey, form: { token: created.token, amount: 1500 } },
      404,
      10002,
    );
    // the bank page of a decided session does not decide again
    expect(
      (
        await page(`${client.sandbox.scaUrl}/iris/bank/${created.token}/decision`, {
          decision: 'refuse',
        })
      ).status,
    ).toBe(409);
  });
});
