import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { CardSandboxClient, type Merchant } from '../../support/card-api.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const year = String(new Date().getUTCFullYear() + 3);
const card = (number: string) => ({
  card_number: number,
  expiration_month: '11',
  expiration_year: year,
  holder_name: 'John Doe',
  cvv: '123',
});

/** A 3-D Secure merchant (card.yaml createTdsAuthentication; the clients' `3dsecure` group). */
describe('the card sandbox for a 3-D Secure merchant', () => {
  let client: CardSandboxClient;
  let tds: Merchant;
  let standard: Merchant;

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    const made = await client.control('POST', '/sandbox/card/merchants', {
      name: 'Secure shop',
      type: '3dsecure',
    });
    expect(made).toMatchObject({ status: 201, body: { type: '3dsecure' } });
    tds = made.body as Merchant;
    standard = await client.merchant();
  });
  afterAll(() => client.close());

  const authenticate = (number: string, key = tds.publicKey) =>
    client.call<Json>('createTdsAuthentication', { key, form: card(number) });
  const read = (id: string) =>
    client.call<Json>('retrieveTdsAuthentication', {
      key: tds.publicKey,
      params: { authenticationId: id },
    });
  const decide = async (challengeUrl: string, decision: 'approve' | 'refuse') => {
    const page = await request(challengeUrl);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('id="tds-approve"');
    const answered = await request(`${challengeUrl}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `decision=${decision}`,
    });
    expect(answered.statusCode).toBe(200);
    await answered.body.text();
  };

  it('refuses card arguments from the server: /tokens 20013, /customers 20016, /payments 20011', async () => {
    const token = await client.send<Json>('createCardToken', {
      key: tds.publicKey,
      form: card('4111111111111111'),
    });
    expect(token).toMatchObject({
      status: 400,
      body: { error: { code: 20013, message: 'Your account does not support tokenization.' } },
    });
    const customer = await client.send<Json>('createCustomer', {
      key: tds.secretKey,
      form: card('4111111111111111'),
    });
    expect(customer).toMatchObject({ status: 400, body: { error: { code: 20016 } } });
    const payment = await client.send<Json>('createPayment', {
      key: tds.secretKey,
      form: { amount: 1000, ...card('4111111111111111') },
    });
    expect(payment).toMatchObject({
      status: 400,
      body: {
        error: { code: 20011, message: '3D Secure enabled. Only token payments are allowed' },
      },
    });
  });

  it('authenticates a card frictionlessly: its token pays, and the payment shows the authentication', async () => {
    const answer = await authenticate('4111111111111111');
    expect(answer.body).toMatchObject({
      status: 'authenticated',
      challenge_url: null,
      card_token: expect.stringMatching(/^ctn_/),
      card: {
        last_four: '1111',
        tds: { enrolled: 'Y', eci_flag: '05', auth_desc: 'Frictionless' },
      },
    });
    const paid = await client.call<Json>('createPayment', {
      key: tds.secretKey,
      form: { amount: 1500, token: answer.body.card_token },
    });
    expect(paid.body.card.tds).toMatchObject({
      enrolled: 'Y',
      eci_flag: '05',
      auth_code: expect.stringMatching(/^[0-9A-F]{6}$/),
      auth_desc: 'Frictionless',
    });
    // The token makes a customer too (no card arguments), which keeps the authenticated card.
    const again = await authenticate('5217925525906273');
    const customer = await client.call<Json>('createCustomer', {
      key: tds.secretKey,
      form: { token: again.body.card_token },
    });
    expect(customer.body.card.tds).toMatchObject({ eci_flag: '02' });
  });

  it('holds a challenge card until the payer approves on the challenge page', async () => {
    const started = await authenticate('4000000000003220');
    expect(started.body).toMatchObject({
      status: 'challenge',
      card_token: null,
      challenge_url: expect.stringMatching(/\/3ds\/tds_/),
    });
    expect((await read(started.body.token)).body).toMatchObject({ status: 'challenge' });
    await decide(started.body.challenge_url, 'approve');
    const done = await read(started.body.token);
    expect(done.body).toMatchObject({
      status: 'authenticated',
      challenge_url: null,
      card_token: expect.stringMatching(/^ctn_/),
      card: { tds: { auth_desc: 'Challenge approved' } },
    });
    const again = await request(`${started.body.challenge_url}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'decision=refuse',
    });
    expect(again.statusCode).toBe(409);
    await again.body.text();
  });

  it('20012 when the payer refuses the challenge, or the issuer fails the authentication card', async () => {
    const started = await authenticate('4000000000003220');
    await decide(started.body.challenge_url, 'refuse');
    const refused = await client.send<Json>('retrieveTdsAuthentication', {
      key: tds.publicKey,
      params: { authenticationId: started.body.token },
    });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 20012 } } });
    const failed = await client.send<Json>('createTdsAuthentication', {
      key: tds.publicKey,
      form: card('4000000000003097'),
    });
    expect(failed).toMatchObject({ status: 400, body: { error: { code: 20012 } } });
  });

  it('20015 for a merchant that is not 3-D Secure; its cards carry tds nulls as before', async () => {
    const answer = await client.send<Json>('createTdsAuthentication', {
      key: standard.publicKey,
      form: card('4111111111111111'),
    });
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 20015 } } });
    const token = await client.call<Json>('createCardToken', {
      key: standard.publicKey,
      form: card('4111111111111111'),
    });
    expect(token.body.card.tds).toEqual({
      enrolled: null,
      eci_flag: null,
      auth_code: null,
      auth_desc: null,
    });
  });
});
