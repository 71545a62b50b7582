import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { toProductRules } from '../../../src/sandbox/open-banking/bank/product-rules.js';
import { OPERATION_IDS } from '../../../src/sandbox/open-banking/bank/sandbox-bank.js';
import {
  type BankResponse,
  type ProductRule,
} from '../../../src/sandbox/open-banking/bank/types.js';
import {
  accountIdOf,
  accountRead,
  authorise,
  domesticPayment,
  IBAN,
  initiate,
  newAisConsent,
  newBank,
  newCofConsent,
  newPayment,
  PRODUCT_RULES,
  PSU_IP,
  request,
  sepaPayment,
  validAisConsent,
} from './fixtures.js';

/** Checks the bank's answers against openapi/psd2.yaml itself, as the HTTP layer does. */

type Json = Record<string, unknown>;
const document = parse(
  readFileSync(new URL('../../../openapi/upstream/psd2.yaml', import.meta.url), 'utf8'),
) as Json;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
ajv.addSchema(document, 'psd2');

function resolve(node: Json): Json {
  const ref = node.$ref;
  if (typeof ref !== 'string') return node;
  return ref
    .slice(2)
    .split('/')
    .reduce<Json>((current, key) => current[key] as Json, document);
}

function operationResponses(operationId: string): Json {
  for (const item of Object.values(document.paths as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(item))
      if (operation.operationId === operationId) return operation.responses as Json;
  }
  throw new Error(`no operation ${operationId}`);
}

function expectConforms(operationId: string, response: BankResponse): void {
  const declared = (operationResponses(operationId) as Record<string, Json | undefined>)[
    String(response.status)
  ];
  expect({ operationId, status: response.status, declared: declared !== undefined }).toEqual({
    operationId,
    status: response.status,
    declared: true,
  });
  const content = resolve(declared!).content as Record<string, { schema: Json }> | undefined;
  if (!content) {
    expect(response.body).toBeUndefined();
    return;
  }
  const schema = JSON.parse(
    JSON.stringify(content['application/json'].schema).replaceAll('"#/', '"psd2#/'),
  ) as Json;
  const validate = ajv.compile(schema);
  const valid = validate(response.body);
  expect({ operationId, status: response.status, errors: valid ? [] : validate.errors }).toEqual({
    operationId,
    status: response.status,
    errors: [],
  });
}

describe('conformance with openapi/psd2.yaml', () => {
  it('implements exactly the operations of psd2.yaml', () => {
    const inSpec = Object.values(document.paths as Record<string, Record<string, Json>>).flatMap(
      (item) => Object.values(item).map((operation) => operation.operationId),
    );
    expect([...OPERATION_IDS].sort()).toEqual([...inSpec].sort());
  });

  it('uses test product rules that mirror x-portico-product-rules', () => {
    const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
    const { notes: _notes, ...rules } = schemas.PaymentDetails['x-portico-product-rules'] as Record<
      string,
      ProductRule
    >;
    const { notes: _fixtureNotes, ...fixture } = PRODUCT_RULES;
    const withoutSchema = Object.fromEntries(
      Object.entries(rules).map(([name, { schema: _schema, ...rule }]) => [name, rule]),
    );
    expect(fixture).toEqual(withoutSchema);
  });

  it('accepts the parsed x-portico-product-rules object as ProductRules and refuses malformed ones', () => {
    const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
    const raw = schemas.PaymentDetails['x-portico-product-rules'];
    expect(toProductRules(raw)).toBe(raw);
    expect(() => toProductRules({ sepa: { required: 'creditorAgent' } })).toThrow('sepa');
    expect(() => toProductRules([])).toThrow();
  });

  it('answers every operation, successes and refusals, with bodies psd2.yaml allows', () => {
    const { sut, clock } = newBank();
    const seen: [string, BankResponse][] = [];
    const record = (operationId: string, response: BankResponse) =>
      seen.push([operationId, response]);
    const handle = (operationId: string, parts: Parameters<typeof request>[1]) => {
      const response = sut.handle(request(operationId, parts));
      record(operationId, response);
      return response;
    };

    handle('listBrands', {});
    const ais = newAisConsent(sut);
    const bankOffered = newAisConsent(sut, { access: {} });
    const aisParams = { brandId: 'danube-bank', consentId: ais.id };
    handle('getConsent', { params: aisParams });
    handle('getConsent', { params: { brandId: 'danube-bank', consentId: bankOffered.id } });
    handle('getConsentStatus', { params: aisParams });
    authorise(sut, ais.scaRedirect);
    handle('getConsent', { params: aisParams });
    handle('createConsent', {
      params: { brandId: 'danube-bank' },
      headers: {},
      body: { access: {}, recurringIndicator: true, validUntil: '2025-04-01' },
    });
    handle('createConsent', {
      params: { brandId: 'danube-bank' },
      headers: { 'tpp-redirect-uri': 'https://tpp.example.com/r' },
      body: { access: {}, recurringIndicator: true, validUntil: '2020-01-01' },
    });

    const accountId = accountIdOf(sut, ais.id, IBAN.aliceHuf);
    const read = (
      operationId: string,
      params: Record<string, string> = {},
      query: Record<string, string> = {},
    ) =>
      record(
        operationId,
        accountRead(
          sut,
          operationId,
          ais.id,
          { accountId, ...params },
          { query, headers: { 'consent-id': ais.id, 'psu-ip-address': PSU_IP } },
        ),
      );
    read('listAccounts');
    read('getAccountDetails');
    read('getBalances');
    read('getTransactions', {}, { dateFrom: '2024-12-01', dateTo: '2025-03-15' });
    read('getTransactions', {}, { dateFrom: '2025-03-15', dateTo: '2025-03-01' });
    const [{ transactionId }] = ((seen.at(-2)![1].body as Json).transactions as Json).booked as {
      transactionId: string;
    }[];
    read('getTransactionDetails', { transactionId });
    read('getTransactionDetails', { transactionId: 'trx-nope' });
    read('getBalances', { accountId: 'acc-nope' });
    record('listAccounts', accountRead(sut, 'listAccounts', 'ais-unknown'));
    record('listAccounts', accountRead(sut, 'listAccounts', undefined));
    for (let attempt = 0; attempt < 5; attempt += 1)
      record('listAccounts', accountRead(sut, 'listAccounts', ais.id));
    expect(seen.at(-1)![1].status).toBe(429);

    const cof = newCofConsent(sut, IBAN.aliceEur);
    const cofParams = { brandId: 'danube-bank', consentId: cof.id };
    handle('getCofConsent', { params: cofParams });
    authorise(sut, cof.scaRedirect);
    handle('getCofConsentStatus', { params: cofParams });
    const funds = (amount: string, currency = 'EUR', consentId = cof.id) =>
      handle('confirmFunds', {
        params: { brandId: 'danube-bank' },
        headers: { 'consent-id': consentId },
        body: { account: { iban: IBAN.aliceEur }, instructedAmount: { currency, amount } },
      });
    funds('10.00');
    funds('1000000.00');
    funds('10.00', 'HUF');
    funds('10.00', 'EUR', ais.id);
    handle('createCofConsent', {
      params: { brandId: 'danube-bank' },
      headers: { 'tpp-redirect-uri': 'https://tpp.example.com/r' },
      body: { account: { iban: IBAN.aliceHuf } },
    });
    handle('deleteCofConsent', { params: cofParams });

    const payment = newPayment(sut, 'sepa-credit-transfers', sepaPayment());
    const paymentParams = {
      brandId: 'danube-bank',
      paymentProduct: 'sepa-credit-transfers',
      paymentId: payment.id,
    };
    handle('getPayment', { params: paymentParams });
    authorise(sut, payment.scaRedirect, { debtorAccount: IBAN.aliceEur });
    handle('getPayment', { params: paymentParams });
    handle('getPaymentStatus', { params: paymentParams });
    handle('getPaymentStatus', { params: { ...paymentParams, paymentId: 'pay-nope' } });
    record('initiatePayment', initiate(sut, 'domestic-credit-transfers', domesticPayment()));
    record(
      'initiatePayment',
      initiate(
        sut,
        'domestic-credit-transfers',
        domesticPayment({ instructedAmount: { currency: 'EUR', amount: '1' } }),
      ),
    );
    record('initiatePayment', initiate(sut, 'sepa-credit-transfers', domesticPayment()));
    record('initiatePayment', initiate(sut, 'no-such-product', domesticPayment()));

    const expiring = validAisConsent(sut, { validUntil: '2025-03-15' });
    clock.set('2025-03-16T09:00:00Z');
    record('listAccounts', accountRead(sut, 'listAccounts', expiring));
    handle('deleteConsent', { params: { brandId: 'danube-bank', consentId: expiring } });
    handle('deleteConsent', { params: aisParams });
    handle('getConsentStatus', { params: { brandId: 'danube-bank', consentId: 'ais-unknown' } });
    handle('getConsentStatus', { params: { brandId: 'nowhere', consentId: ais.id } });

    expect(new Set(seen.map(([operationId]) => operationId))).toEqual(new Set(OPERATION_IDS));
    expect(new Set(seen.map(([, response]) => response.status))).toEqual(
      new Set([200, 201, 400, 401, 403, 404, 409, 429]),
    );
    for (const [operationId, response] of seen) expectConforms(operationId, response);
  });
});
