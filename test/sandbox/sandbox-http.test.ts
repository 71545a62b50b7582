import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import type { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';
import { callOperation, tppMessageCode } from '../support/sandbox-api.js';
import { completeSca } from '../support/sca.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

const BRAND = 'danube-bank';
const ALICE_HUF = 'HU75118000170000001234567817';
const ALICE_EUR = 'HU80118000170000001234567824';
const REDIRECTS = {
  'tpp-redirect-uri': 'https://tpp.example/ok',
  'tpp-nok-redirect-uri': 'https://tpp.example/nok',
};
const inDays = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const alice = { username: 'alice', password: 'alice-pass' };
const scaHref = (body: unknown) =>
  (body as { _links: { scaRedirect: { href: string } } })._links.scaRedirect.href;

describe('the sandbox over mutual TLS, every answer checked against openapi/psd2.yaml', () => {
  let sandbox: RunningSandbox;
  let tpp: UpstreamTransport;
  beforeAll(async () => {
    sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
    tpp = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
  });
  afterAll(async () => {
    await tpp.close();
    await sandbox.close();
  });

  it('lists at least three brands whose authorisation endpoint is the sandbox SCA page', async () => {
    const { body } = await callOperation<{
      brands: { brandId: string; authorizationEndpoint: string }[];
    }>(tpp, 'listBrands');
    expect(body?.brands.length).toBeGreaterThanOrEqual(3);
    for (const brand of body?.brands ?? [])
      expect(brand.authorizationEndpoint.startsWith(sandbox.scaUrl)).toBe(true);
  });

  it('runs an account-information consent through SCA, the account reads, the daily budget and DELETE', async () => {
    const created = await callOperation(tpp, 'createConsent', {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: {
        access: {
          accounts: [{ iban: ALICE_HUF }],
          balances: [{ iban: ALICE_HUF }],
          transactions: [{ iban: ALICE_HUF }],
        },
        recurringIndicator: true,
        validUntil: inDays(30),
        frequencyPerDay: 2,
      },
    });
    expect(created.status).toBe(201);
    const consentId = created.body?.consentId as string;
    expect(
      (await callOperation(tpp, 'getConsentStatus', { params: { brandId: BRAND, consentId } }))
        .body,
    ).toEqual({ consentStatus: 'received' });

    const location = await completeSca(scaHref(created.body), { ...alice, decision: 'approve' });
    expect(location.startsWith('https://tpp.example/ok')).toBe(true);
    const consent = await callOperation(tpp, 'getConsent', {
      params: { brandId: BRAND, consentId },
    });
    expect(consent.body).toMatchObject({
      consentStatus: 'valid',
      recurringIndicator: true,
      validUntil: inDays(30),
    });

    const attended = { 'consent-id': consentId, 'psu-ip-address': '192.0.2.10' };
    const accounts = await callOperation<{ accounts: { resourceId: string; iban: string }[] }>(
      tpp,
      'listAccounts',
      { params: { brandId: BRAND }, headers: attended },
    );
    expect(accounts.body?.accounts.map((a) => a.iban)).toEqual([ALICE_HUF]);
    const accountId = accounts.body?.accounts[0].resourceId as string;
    expect(
      (
        await callOperation(tpp, 'getAccountDetails', {
          params: { brandId: BRAND, accountId },
          headers: attended,
        })
      ).status,
    ).toBe(200);
    const balances = await callOperation<{ balances: { balanceType: string }[] }>(
      tpp,
      'getBalances',
      { params: { brandId: BRAND, accountId }, headers: attended },
    );
    expect(new Set(balances.body?.balances.map((b) => b.balanceType))).toEqual(
      new Set(['expected', 'closingBooked', 'interimAvailable', 'interimBooked']),
    );
    const transactions = await callOperation<{
      transactions: { booked: { transactionId: string }[]; pending?: unknown[] };
    }>(tpp, 'getTransactions', {
      params: { brandId: BRAND, accountId },
      query: { dateFrom: inDays(-60), dateTo: inDays(0) },
      headers: attended,
    });
    expect(transactions.body?.transactions.booked.length).toBeGreaterThan(0);
    const transactionId = transactions.body?.transactions.booked[0].transactionId as string;
    expect(
      (
        await callOperation(tpp, 'getTransactionDetails', {
          params: { brandId: BRAND, accountId, transactionId },
          headers: attended,
        })
      ).status,
    ).toBe(200);
    const noDates = await callOperation(tpp, 'getTransactions', {
      params: { brandId: BRAND, accountId },
      headers: attended,
    });
    expect([noDates.status, tppMessageCode(noDates)]).toEqual([400, 'FORMAT_ERROR']);

    // frequencyPerDay 2: the third unattended read of the day is refused.
    const unattended = { 'consent-id': consentId };
    expect(
      (
        await callOperation(tpp, 'listAccounts', {
          params: { brandId: BRAND },
          headers: unattended,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await callOperation(tpp, 'getBalances', {
          params: { brandId: BRAND, accountId },
          headers: unattended,
        })
      ).status,
    ).toBe(200);
    const exceeded = await callOperation(tpp, 'listAccounts', {
      params: { brandId: BRAND },
      headers: unattended,
    });
    expect([exceeded.status, tppMessageCode(exceeded)]).toEqual([429, 'ACCESS_EXCEEDED']);

    expect(
      (await callOperation(tpp, 'deleteConsent', { params: { brandId: BRAND, consentId } })).status,
    ).toBe(200);
    expect(
      (await callOperation(tpp, 'getConsentStatus', { params: { brandId: BRAND, consentId } }))
        .body,
    ).toEqual({ consentStatus: 'terminatedByTpp' });
    const afterDelete = await callOperation(tpp, 'listAccounts', {
      params: { brandId: BRAND },
      headers: attended,
    });
    expect([afterDelete.status, tppMessageCode(afterDelete)]).toEqual([401, 'CONSENT_INVALID']);
  });

  it('refuses account reads without Consent-ID and with an unknown one', async () => {
    const missing = await callOperation(tpp, 'listAccounts', { params: { brandId: BRAND } });
    expect([missing.status, tppMessageCode(missing)]).toEqual([400, 'FORMAT_ERROR']);
    const unknown = await callOperation(tpp, 'listAccounts', {
      params: { brandId: BRAND },
      headers: { 'consent-id': 'no-such-consent' },
    });
    expect([unknown.status, tppMessageCode(unknown)]).toEqual([403, 'CONSENT_UNKNOWN']);
  });

  it('sends a denied consent to the nok address and marks it rejected', async () => {
    const created = await callOperation(tpp, 'createConsent', {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: {
        access: { accounts: [{ iban: ALICE_HUF }] },
        recurringIndicator: false,
        validUntil: inDays(1),
      },
    });
    const location = await completeSca(scaHref(created.body), { ...alice, decision: 'deny' });
    expect(location.startsWith('https://tpp.example/nok')).toBe(true);
    const status = await callOperation(tpp, 'getConsentStatus', {
      params: { brandId: BRAND, consentId: created.body?.consentId as string },
    });
    expect(status.body).toEqual({ consentStatus: 'rejected' });
  });

  it('confirms funds under an approved confirmation-of-funds consent', async () => {
    const created = await callOperation(tpp, 'createCofConsent', {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: { account: { iban: ALICE_EUR } },
    });
    expect(created.status).toBe(201);
    const consentId = created.body?.consentId as string;
    await completeSca(scaHref(created.body), { ...alice, decision: 'approve' });
    expect(
      (await callOperation(tpp, 'getCofConsent', { params: { brandId: BRAND, consentId } })).body,
    ).toMatchObject({ consentStatus: 'valid', account: { iban: ALICE_EUR } });
    expect(
      (await callOperation(tpp, 'getCofConsentStatus', { params: { brandId: BRAND, consentId } }))
        .body,
    ).toEqual({ consentStatus: 'valid' });
    const enough = await callOperation(tpp, 'confirmFunds', {
      params: { brandId: BRAND },
      headers: { 'consent-id': consentId },
      body: {
        account: { iban: ALICE_EUR },
        instructedAmount: { currency: 'EUR', amount: '100.00' },
      },
    });
    expect(enough.body).toEqual({ fundsAvailable: true });
    const tooMuch = await callOperation(tpp, 'confirmFunds', {
      params: { brandId: BRAND },
      headers: { 'consent-id': consentId },
      body: {
        account: { iban: ALICE_EUR },
        instructedAmount: { currency: 'EUR', amount: '999999.00' },
      },
    });
    expect(tooMuch.body).toEqual({ fundsAvailable: false });
    expect(
      (await callOperation(tpp, 'deleteCofConsent', { params: { brandId: BRAND, consentId } }))
        .status,
    ).toBe(200);
  });

  it('initiates a domestic payment that the PSU approves: RCVD, then ACSC', async () => {
    const created = await callOperation(tpp, 'initiatePayment', {
      params: { brandId: BRAND, paymentProduct: 'domestic-credit-transfers' },
      headers: REDIRECTS,
      body: {
        instructedAmount: { currency: 'HUF', amount: '15000.00' },
        creditorName: 'Kovacs Peter',
        creditorAccount: { iban: 'HU42117730161111101800000000' },
        creditorType: 'INDIVIDUAL',
        remittanceInformationUnstructured: 'Rent November',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ transactionStatus: 'RCVD' });
    const paymentId = created.body?.paymentId as string;
    const params = { brandId: BRAND, paymentProduct: 'domestic-credit-transfers', paymentId };
    await completeSca(scaHref(created.body), {
      ...alice,
      decision: 'approve',
      debtorAccount: ALICE_HUF,
    });
    expect((await callOperation(tpp, 'getPaymentStatus', { params })).body).toEqual({
      transactionStatus: 'ACSC',
    });
    const payment = await callOperation(tpp, 'getPayment', { params });
    expect(payment.body).toMatchObject({
      transactionStatus: 'ACSC',
      paymentId,
      paymentDetails: { creditorName: 'Kovacs Peter', debtorAccount: { iban: ALICE_HUF } },
    });
  });

  it('refuses a SEPA payment without creditorAgent and a domestic payment in EUR', async () => {
    const base = {
      creditorName: 'ACME GmbH',
      creditorAccount: { iban: 'DE89370400440532013000' },
      creditorType: 'COMPANY',
      remittanceInformationUnstructured: 'Invoice 42',
    };
    const sepa = await callOperation(tpp, 'initiatePayment', {
      params: { brandId: BRAND, paymentProduct: 'sepa-credit-transfers' },
      headers: REDIRECTS,
      body: {
        ...base,
        instructedAmount: { currency: 'EUR', amount: '10.00' },
        creditorAddress: { country: 'DE' },
      },
    });
    expect([sepa.status, tppMessageCode(sepa)]).toEqual([400, 'FORMAT_ERROR']);
    const domestic = await callOperation(tpp, 'initiatePayment', {
      params: { brandId: BRAND, paymentProduct: 'domestic-credit-transfers' },
      headers: REDIRECTS,
      body: { ...base, instructedAmount: { currency: 'EUR', amount: '10.00' } },
    });
    expect([domestic.status, tppMessageCode(domestic)]).toEqual([400, 'PARAMETER_NOT_CONSISTENT']);
  });

  it('rejects a payment the PSU denies', async () => {
    const created = await callOperation(tpp, 'initiatePayment', {
      params: { brandId: BRAND, paymentProduct: 'cross-border-credit-transfer' },
      headers: REDIRECTS,
      body: {
        instructedAmount: { currency: 'EUR', amount: '25.00' },
        creditorName: 'Jane Roe',
        creditorAccount: { iban: 'DE89370400440532013000' },
        creditorType: 'INDIVIDUAL',
        creditorAgent: 'COBADEFFXXX',
        creditorAddress: { country: 'DE' },
        remittanceInformationUnstructured: 'Gift',
      },
    });
    expect(created.status).toBe(201);
    const location = await completeSca(scaHref(created.body), { ...alice, decision: 'deny' });
    expect(location.startsWith('https://tpp.example/nok')).toBe(true);
    const status = await callOperation(tpp, 'getPaymentStatus', {
      params: {
        brandId: BRAND,
        paymentProduct: 'cross-border-credit-transfer',
        paymentId: created.body?.paymentId as string,
      },
    });
    expect(status.body).toEqual({ transactionStatus: 'RJCT' });
  });
});
