import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { toProductRules } from '#src/sandbox/open-banking/bank/product-rules.js';
import { OPERATION_IDS } from '#src/sandbox/open-banking/bank/sandbox-bank.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import type {
  UpstreamResponse,
  UpstreamTransport,
} from '#src/upstreams/http/upstream-transport.js';
import { contract, sendOperation, type Call } from '../support/sandbox-api.js';
import { completeSca } from '../support/sca.js';
import { testDatabaseUrl } from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';
import { PRODUCT_RULES } from './bank/fixtures.js';

/**
 * Drives every operation of openapi/upstream/psd2.yaml on the running sandbox, successes and refusals,
 * and checks each answer with the contract's own validator (Psd2Contract.validateResponse, which the
 * gateway applies to the provider's answers): a status the operation does not declare, a required
 * header that is missing or malformed, or a body that breaks the schema fails the test. The bank keeps
 * its state in the test database (PostgreSQL or the embedded engine), as `npm start` has it.
 */

const BRAND = 'danube-bank';
const ALICE_HUF = 'HU75118000170000001234567817';
const ALICE_EUR = 'HU80118000170000001234567824';
const REDIRECTS = {
  'tpp-redirect-uri': 'https://tpp.example/ok',
  'tpp-nok-redirect-uri': 'https://tpp.example/nok',
};
const alice = { username: 'alice', password: 'alice-pass' };
const PSU = { 'psu-ip-address': '192.0.2.10' };
const DAY_MS = 86_400_000;

type Body = Record<string, unknown>;
interface Answer {
  operationId: string;
  label: string;
  status: number;
  code?: string;
}

const codeOf = (body: unknown) =>
  (body as { tppMessages?: { code: string }[] } | undefined)?.tppMessages?.[0]?.code;
const scaHref = (body: unknown) =>
  (body as { _links: { scaRedirect: { href: string } } })._links.scaRedirect.href;

describe('the sandbox answers every operation as openapi/upstream/psd2.yaml declares', () => {
  let sandbox: RunningSandbox;
  let tpp: UpstreamTransport;
  let aiOnly: UpstreamTransport;
  let noRoles: UpstreamTransport;
  let clock = Date.now();
  const answers: Answer[] = [];
  const schema = `sandbox_contract_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
      now: () => new Date(clock),
      database: { url: testDatabaseUrl(), schema },
    });
    tpp = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    aiOnly = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp-ai'));
    noRoles = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp-noroles'));
  });
  afterAll(async () => {
    await Promise.all([tpp.close(), aiOnly.close(), noRoles.close()]);
    await sandbox.close();
    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.end();
  });

  /** Checks one answer against the contract and against what the scenario expects of it. */
  function check<T>(
    operationId: string,
    label: string,
    response: UpstreamResponse<T>,
    expected: [number, string?],
    requestId?: string,
  ): UpstreamResponse<T> {
    const problems = contract.validateResponse(
      operationId,
      response.status,
      response.headers,
      response.body,
    );
    expect({ label, status: response.status, code: codeOf(response.body), problems }).toEqual({
      label,
      status: expected[0],
      code: expected[1],
      problems: [],
    });
    if (requestId) expect(response.headers['x-request-id']).toBe(requestId);
    answers.push({ operationId, label, status: response.status, code: codeOf(response.body) });
    return response;
  }

  async function call<T = Body>(
    operationId: string,
    label: string,
    expected: [number, string?],
    request: Call = {},
    transport = tpp,
  ): Promise<UpstreamResponse<T>> {
    const requestId = randomUUID();
    const response = await sendOperation<T>(transport, operationId, {
      ...request,
      headers: { 'x-request-id': requestId, ...request.headers },
    });
    // A request whose own X-Request-ID is refused gets a fresh one back, not its echo.
    const echoed = request.headers?.['x-request-id'] === undefined ? requestId : undefined;
    return check(operationId, label, response, expected, echoed);
  }

  /** A request the transport cannot shape (raw body, other media types, other methods). */
  async function raw(
    operationId: string,
    label: string,
    expected: [number, string?],
    request: {
      method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
      path: string;
      headers?: Record<string, string>;
      body?: string;
    },
  ): Promise<UpstreamResponse<unknown>> {
    const requestId = randomUUID();
    const url = new URL(sandbox.openBankingUrl);
    const response = await tpp.dispatcher().request({
      origin: url.origin,
      path: request.path,
      method: request.method ?? 'POST',
      headers: { 'x-request-id': requestId, ...request.headers },
      body: request.body,
    });
    const text = await response.body.text();
    const headers = Object.fromEntries(
      Object.entries(response.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(', ') : String(value),
      ]),
    );
    return check(
      operationId,
      label,
      {
        status: response.statusCode,
        headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      },
      expected,
      requestId,
    );
  }

  const consentBody = (overrides: Body = {}) => ({
    access: {
      accounts: [{ iban: ALICE_HUF }, { iban: ALICE_EUR }],
      balances: [{ iban: ALICE_HUF }],
      transactions: [{ iban: ALICE_HUF }],
    },
    recurringIndicator: true,
    validUntil: new Date(clock + 30 * DAY_MS).toISOString().slice(0, 10),
    ...overrides,
  });
  const domestic = (overrides: Body = {}) => ({
    instructedAmount: { currency: 'HUF', amount: '1500.00' },
    creditorName: 'Kovacs Peter',
    creditorAccount: { iban: 'HU42117730161111101800000000' },
    creditorType: 'INDIVIDUAL',
    remittanceInformationUnstructured: 'Rent',
    ...overrides,
  });

  it('implements exactly the operations of psd2.yaml', () => {
    expect([...OPERATION_IDS].sort()).toEqual(
      contract.operations.map((operation) => operation.operationId).sort(),
    );
  });

  it('uses test product rules that mirror x-portico-product-rules, and reads them typed', () => {
    const raw = contract.schemas.PaymentDetails['x-portico-product-rules'] as Record<
      string,
      unknown
    >;
    const { notes: _notes, ...rules } = raw;
    const { notes: _fixtureNotes, ...fixture } = PRODUCT_RULES;
    const withoutSchema = Object.fromEntries(
      Object.entries(rules as Record<string, Body>).map(([name, { schema: _schema, ...rule }]) => [
        name,
        rule,
      ]),
    );
    expect(fixture).toEqual(withoutSchema);
    expect(toProductRules(raw)).toBe(raw);
    expect(() => toProductRules({ sepa: { required: 'creditorAgent' } })).toThrow('sepa');
  });

  it('brands: the list, and the refusals every operation shares', async () => {
    await call('listBrands', 'brands', [200]);
    await call('listBrands', 'Accept: application/xml', [406, 'REQUESTED_FORMATS_INVALID'], {
      headers: { accept: 'application/xml' },
    });
    await call('listBrands', 'Accept: JSON among others', [200], {
      headers: { accept: 'application/xml, application/json;q=0.5' },
    });
    await call('listBrands', 'Accept: */*', [200], { headers: { accept: '*/*' } });
    await call('listBrands', 'Accept: JSON excluded', [406, 'REQUESTED_FORMATS_INVALID'], {
      headers: { accept: '*/*, application/json;q=0' },
    });
    await call(
      'listBrands',
      'certificate without PSD2 roles',
      [401, 'CERTIFICATE_INVALID'],
      {},
      noRoles,
    );
    await call('listBrands', 'X-Request-ID not a UUID', [400, 'FORMAT_ERROR'], {
      headers: { 'x-request-id': 'not-a-uuid' },
    });
    await raw('listBrands', 'PUT /brands', [405, 'SERVICE_INVALID'], {
      method: 'PUT',
      path: '/brands',
    });
  });

  it('account-information consents, account reads and their refusals', async () => {
    const created = await call<Body>('createConsent', 'consent', [201], {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: consentBody({ frequencyPerDay: 1 }),
    });
    const consentId = created.body!.consentId as string;
    expect(created.headers.location).toBe(`/${BRAND}/bg/v1/consents/${consentId}`);
    expect(created.headers['aspsp-sca-approach']).toBe('REDIRECT');
    const consent = { brandId: BRAND, consentId };
    const path = `/${BRAND}/bg/v1/consents`;

    await call('createConsent', 'no TPP-Redirect-URI', [400, 'FORMAT_ERROR'], {
      params: { brandId: BRAND },
      body: consentBody(),
    });
    await call('createConsent', 'validUntil in the past', [400, 'PERIOD_INVALID'], {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: consentBody({ validUntil: '2020-01-01' }),
    });
    await call('createConsent', 'recurringIndicator missing', [400, 'FORMAT_ERROR'], {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: { ...consentBody(), recurringIndicator: undefined },
    });
    await call('createConsent', 'unknown brand', [404, 'RESOURCE_UNKNOWN'], {
      params: { brandId: 'no-such-bank' },
      headers: REDIRECTS,
      body: consentBody(),
    });
    const jsonHeaders = { 'content-type': 'application/json', ...REDIRECTS };
    await raw('createConsent', 'malformed JSON', [400, 'FORMAT_ERROR'], {
      path,
      headers: jsonHeaders,
      body: '{"access": {',
    });
    await raw('createConsent', 'body too large', [413, 'FORMAT_ERROR'], {
      path,
      headers: jsonHeaders,
      body: JSON.stringify({ ...consentBody(), padding: 'x'.repeat(1_100_000) }),
    });
    await raw('createConsent', 'text/plain body', [415, 'FORMAT_ERROR'], {
      path,
      headers: { ...REDIRECTS, 'content-type': 'text/plain' },
      body: JSON.stringify(consentBody()),
    });
    await raw('createConsent', 'application/xml body', [415, 'FORMAT_ERROR'], {
      path,
      headers: { ...REDIRECTS, 'content-type': 'application/xml' },
      body: '<consent/>',
    });

    await call('getConsent', 'received', [200], { params: consent });
    await call('getConsentStatus', 'received', [200], { params: consent });
    await call('getConsent', 'unknown consent', [403, 'CONSENT_UNKNOWN'], {
      params: { brandId: BRAND, consentId: 'ais-unknown' },
    });
    await call('getConsentStatus', 'unknown brand', [404, 'RESOURCE_UNKNOWN'], {
      params: { brandId: 'no-such-bank', consentId },
    });
    await raw('getConsent', 'PATCH on a consent', [405, 'SERVICE_INVALID'], {
      method: 'PATCH',
      path: `${path}/${consentId}`,
    });
    await call('listAccounts', 'consent not yet authorised', [401, 'CONSENT_INVALID'], {
      params: { brandId: BRAND },
      headers: { 'consent-id': consentId, ...PSU },
    });

    await completeSca(scaHref(created.body), { ...alice, decision: 'approve' });
    await call('getConsent', 'valid', [200], { params: consent });
    const attended = { 'consent-id': consentId, ...PSU };
    const accounts = await call<{ accounts: { resourceId: string; iban: string }[] }>(
      'listAccounts',
      'accounts',
      [200],
      { params: { brandId: BRAND }, headers: attended },
    );
    const idOf = (iban: string) =>
      accounts.body!.accounts.find((account) => account.iban === iban)!.resourceId;
    const huf = { brandId: BRAND, accountId: idOf(ALICE_HUF) };
    const eur = { brandId: BRAND, accountId: idOf(ALICE_EUR) };
    await call('listAccounts', 'no Consent-ID', [400, 'FORMAT_ERROR'], {
      params: { brandId: BRAND },
      headers: PSU,
    });
    await call('listAccounts', 'unknown Consent-ID', [403, 'CONSENT_UNKNOWN'], {
      params: { brandId: BRAND },
      headers: { 'consent-id': 'ais-unknown', ...PSU },
    });
    await call('getAccountDetails', 'account', [200], { params: huf, headers: attended });
    await call('getAccountDetails', 'account outside the consent', [404, 'RESOURCE_UNKNOWN'], {
      params: { brandId: BRAND, accountId: 'acc-000000000000000000000000' },
      headers: attended,
    });
    await call('getBalances', 'balances', [200], { params: huf, headers: attended });
    await call('getBalances', 'balances not granted', [401, 'CONSENT_INVALID'], {
      params: eur,
      headers: attended,
    });

    const period = {
      dateFrom: new Date(clock - 60 * DAY_MS).toISOString().slice(0, 10),
      dateTo: new Date(clock).toISOString().slice(0, 10),
    };
    const read = (label: string, expected: [number, string?], query: Record<string, string>) =>
      call<{ transactions: { booked?: { transactionId: string }[]; pending?: unknown[] } }>(
        'getTransactions',
        label,
        expected,
        { params: huf, headers: attended, query },
      );
    const both = await read('transactions', [200], period);
    expect(both.body!.transactions.booked!.length).toBeGreaterThan(0);
    expect(both.body!.transactions.pending).toBeDefined();
    const booked = await read('booked only', [200], { ...period, bookingStatus: 'booked' });
    expect(booked.body!.transactions.pending).toBeUndefined();
    const pending = await read('pending only', [200], { ...period, bookingStatus: 'pending' });
    expect(pending.body!.transactions.booked).toBeUndefined();
    await read('bookingStatus information', [400, 'PARAMETER_NOT_SUPPORTED'], {
      ...period,
      bookingStatus: 'information',
    });
    await read('bookingStatus not a value', [400, 'FORMAT_ERROR'], {
      ...period,
      bookingStatus: 'settled',
    });
    await read('dateFrom after dateTo', [400, 'PERIOD_INVALID'], {
      dateFrom: period.dateTo,
      dateTo: period.dateFrom,
    });
    await read('no dateFrom', [400, 'FORMAT_ERROR'], { dateTo: period.dateTo });
    const transactionId = both.body!.transactions.booked![0].transactionId;
    await call('getTransactionDetails', 'transaction', [200], {
      params: { ...huf, transactionId },
      headers: attended,
    });
    await call('getTransactionDetails', 'unknown transaction', [404, 'RESOURCE_UNKNOWN'], {
      params: { ...huf, transactionId: 'trx-unknown' },
      headers: attended,
    });

    // frequencyPerDay 1: the second unattended read of the day is refused, with Retry-After.
    const unattended = { 'consent-id': consentId };
    await call('getBalances', 'unattended', [200], { params: huf, headers: unattended });
    const exceeded = await call(
      'listAccounts',
      'unattended beyond the day',
      [429, 'ACCESS_EXCEEDED'],
      { params: { brandId: BRAND }, headers: unattended },
    );
    expect(Number(exceeded.headers['retry-after'])).toBeGreaterThan(0);

    await call('deleteConsent', 'terminate', [200], { params: consent });
    await call('deleteConsent', 'terminate again', [200], { params: consent });
    await call('deleteConsent', 'unknown consent', [403, 'CONSENT_UNKNOWN'], {
      params: { brandId: BRAND, consentId: 'ais-unknown' },
    });
    await raw('deleteConsent', 'DELETE with a text/plain body', [415, 'FORMAT_ERROR'], {
      method: 'DELETE',
      path: `${path}/${consentId}`,
      headers: { 'content-type': 'text/plain' },
      body: 'please',
    });
    await call('listAccounts', 'terminated consent', [401, 'CONSENT_INVALID'], {
      params: { brandId: BRAND },
      headers: attended,
    });
  });

  it('an expired consent: reads refused, DELETE a conflict', async () => {
    const created = await call<Body>('createConsent', 'consent valid until today', [201], {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: consentBody({ validUntil: new Date(clock).toISOString().slice(0, 10) }),
    });
    await completeSca(scaHref(created.body), { ...alice, decision: 'approve' });
    const consentId = created.body!.consentId as string;
    clock += DAY_MS;
    try {
      await call('listAccounts', 'expired consent', [401, 'CONSENT_EXPIRED'], {
        params: { brandId: BRAND },
        headers: { 'consent-id': consentId, ...PSU },
      });
      await call('deleteConsent', 'expired consent', [409, 'STATUS_INVALID'], {
        params: { brandId: BRAND, consentId },
      });
    } finally {
      clock -= DAY_MS;
    }
  });

  it('confirmation-of-funds consents and funds checks', async () => {
    const created = await call<Body>('createCofConsent', 'consent', [201], {
      params: { brandId: BRAND },
      headers: REDIRECTS,
      body: { account: { iban: ALICE_EUR } },
    });
    const consentId = created.body!.consentId as string;
    expect(created.headers.location).toBe(
      `/${BRAND}/bg/v2/consents/confirmation-of-funds/${consentId}`,
    );
    expect(created.headers['aspsp-sca-approach']).toBe('REDIRECT');
    const consent = { brandId: BRAND, consentId };
    await call('createCofConsent', 'no TPP-Redirect-URI', [400, 'FORMAT_ERROR'], {
      params: { brandId: BRAND },
      body: { account: { iban: ALICE_EUR } },
    });
    await call(
      'createCofConsent',
      'certificate without PSP_IC',
      [401, 'CERTIFICATE_INVALID'],
      {
        params: { brandId: BRAND },
        headers: REDIRECTS,
        body: { account: { iban: ALICE_EUR } },
      },
      aiOnly,
    );
    await call('getCofConsent', 'received', [200], { params: consent });
    await call('getCofConsent', 'unknown consent', [403, 'CONSENT_UNKNOWN'], {
      params: { brandId: BRAND, consentId: 'cof-unknown' },
    });
    await completeSca(scaHref(created.body), { ...alice, decision: 'approve' });
    await call('getCofConsentStatus', 'valid', [200], { params: consent });
    await call('getCofConsentStatus', 'unknown consent', [403, 'CONSENT_UNKNOWN'], {
      params: { brandId: BRAND, consentId: 'cof-unknown' },
    });

    const funds = (label: string, expected: [number, string?], amount: string, extra: Call = {}) =>
      call('confirmFunds', label, expected, {
        params: { brandId: BRAND },
        headers: { 'consent-id': consentId },
        body: { account: { iban: ALICE_EUR }, instructedAmount: { currency: 'EUR', amount } },
        ...extra,
      });
    expect((await funds('enough', [200], '10.00')).body).toEqual({ fundsAvailable: true });
    expect((await funds('too much', [200], '999999.00')).body).toEqual({ fundsAvailable: false });
    await funds('another currency', [400, 'PARAMETER_NOT_CONSISTENT'], '10.00', {
      body: { account: { iban: ALICE_EUR }, instructedAmount: { currency: 'HUF', amount: '10' } },
    });
    await funds('no Consent-ID', [400, 'FORMAT_ERROR'], '10.00', { headers: {} });
    await funds('unknown Consent-ID', [403, 'CONSENT_UNKNOWN'], '10.00', {
      headers: { 'consent-id': 'cof-unknown' },
    });
    await raw('confirmFunds', 'text/plain body', [415, 'FORMAT_ERROR'], {
      path: `/${BRAND}/bg/v1/funds-confirmations`,
      headers: { 'consent-id': consentId, 'content-type': 'text/plain' },
      body: 'EUR 10',
    });

    await call('deleteCofConsent', 'terminate', [200], { params: consent });
    await call('deleteCofConsent', 'unknown consent', [403, 'CONSENT_UNKNOWN'], {
      params: { brandId: BRAND, consentId: 'cof-unknown' },
    });
    await funds('terminated consent', [401, 'CONSENT_INVALID'], '10.00');
  });

  it('payments and their refusals', async () => {
    const params = { brandId: BRAND, paymentProduct: 'domestic-credit-transfers' };
    const created = await call<Body>('initiatePayment', 'payment', [201], {
      params,
      headers: REDIRECTS,
      body: domestic(),
    });
    const paymentId = created.body!.paymentId as string;
    expect(created.headers.location).toBe(
      `/${BRAND}/bg/v1/payments/domestic-credit-transfers/${paymentId}`,
    );
    expect(created.headers['aspsp-sca-approach']).toBe('REDIRECT');
    await call('initiatePayment', 'product field missing', [400, 'FORMAT_ERROR'], {
      params,
      headers: REDIRECTS,
      body: domestic({ creditorType: undefined }),
    });
    await call(
      'initiatePayment',
      'currency not of the product',
      [400, 'PARAMETER_NOT_CONSISTENT'],
      {
        params,
        headers: REDIRECTS,
        body: domestic({ instructedAmount: { currency: 'EUR', amount: '10.00' } }),
      },
    );
    await call('initiatePayment', 'unknown product', [404, 'PRODUCT_UNKNOWN'], {
      params: { ...params, paymentProduct: 'instant-credit-transfers' },
      headers: REDIRECTS,
      body: {},
    });
    await call('initiatePayment', 'product the brand does not offer', [403, 'PRODUCT_INVALID'], {
      params: { ...params, brandId: 'aegean-bank' },
      headers: REDIRECTS,
      body: domestic(),
    });
    await call(
      'initiatePayment',
      'certificate without PSP_PI',
      [401, 'CERTIFICATE_INVALID'],
      {
        params,
        headers: REDIRECTS,
        body: domestic(),
      },
      aiOnly,
    );

    const payment = { ...params, paymentId };
    await call('getPayment', 'received', [200], { params: payment });
    await call('getPaymentStatus', 'received', [200], { params: payment });
    await completeSca(scaHref(created.body), {
      ...alice,
      decision: 'approve',
      debtorAccount: ALICE_HUF,
    });
    const executed = await call<Body>('getPayment', 'executed', [200], { params: payment });
    expect(executed.body).toMatchObject({ transactionStatus: 'ACSC' });
    await call('getPayment', 'unknown payment', [404, 'RESOURCE_UNKNOWN'], {
      params: { ...payment, paymentId: 'pay-unknown' },
    });
    await call('getPaymentStatus', 'unknown product', [404, 'PRODUCT_UNKNOWN'], {
      params: { ...payment, paymentProduct: 'instant-credit-transfers' },
    });
    await call('getPaymentStatus', 'unknown payment', [404, 'RESOURCE_UNKNOWN'], {
      params: { ...payment, paymentId: 'pay-unknown' },
    });
  });

  it('drove every operation to a success and to a refusal, and every status the sandbox gives', () => {
    for (const operationId of OPERATION_IDS) {
      const statuses = answers.filter((a) => a.operationId === operationId).map((a) => a.status);
      expect({ operationId, success: statuses.some((s) => s < 300) }).toEqual({
        operationId,
        success: true,
      });
      expect({ operationId, refusal: statuses.some((s) => s >= 400) }).toEqual({
        operationId,
        refusal: true,
      });
    }
    expect([...new Set(answers.map((a) => a.status))].sort()).toEqual([
      200, 201, 400, 401, 403, 404, 405, 406, 409, 413, 415, 429,
    ]);
  });
});
