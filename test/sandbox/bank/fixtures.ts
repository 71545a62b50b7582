import { expect } from '@jest/globals';
import { SandboxBank } from '#src/sandbox/open-banking/bank/sandbox-bank.js';
import {
  type BankRequest,
  type BankResponse,
  type ProductRules,
  type ScaResponse,
} from '#src/sandbox/open-banking/bank/types.js';

/**
 * Mirrors openapi/psd2.yaml `PaymentDetails.x-portico-product-rules` (no YAML parser in the
 * tests; the HTTP layer hands the bank the parsed original).
 */
export const PRODUCT_RULES: ProductRules = {
  'domestic-credit-transfers': {
    aliases: [],
    currencies: ['HUF', 'PLN'],
    required: [
      'instructedAmount',
      'creditorName',
      'creditorAccount',
      'creditorType',
      'remittanceInformationUnstructured',
    ],
  },
  'sepa-credit-transfers': {
    aliases: [],
    required: [
      'instructedAmount',
      'creditorName',
      'creditorAccount',
      'creditorType',
      'creditorAgent',
      'creditorAddress',
      'creditorAddress.country',
      'remittanceInformationUnstructured',
    ],
  },
  'cross-border-credit-transfers': {
    aliases: ['cross-border-credit-transfer'],
    required: [
      'instructedAmount',
      'creditorName',
      'creditorAccount',
      'creditorType',
      'creditorAgent',
      'creditorAddress.country',
      'remittanceInformationUnstructured',
    ],
  },
  notes: 'A product without a currencies list accepts any ISO 4217 code.',
};

export const SCA_BASE_URL = 'https://sandbox.example.test:8443';
export const TPP = 'PSDHU-MNB-TPP0001';
export const OTHER_TPP = 'PSDPL-KNF-TPP0002';
export const REDIRECT_URI = 'https://tpp.example.com/return?state=ok';
export const NOK_REDIRECT_URI = 'https://tpp.example.com/return-nok?state=nok';
export const PSU_IP = '192.168.8.78';

/** Accounts of the documented test users (see test-users.ts). */
export const IBAN = {
  aliceHuf: 'HU75118000170000001234567817',
  aliceEur: 'HU80118000170000001234567824',
  aliceBlockedHuf: 'HU39118000170000007654321017',
  aliceAegeanEur: 'GR6509001020000000987600111',
  bobPln: 'PL33193000180000100200300401',
  bobEurLow: 'PL76193000180000100200300403',
  bobHufLow: 'HU53118000240000002345678917',
  carolEur: 'GR1309001010000000123400561',
} as const;

/** A clock the test moves by hand. */
export class TestClock {
  constructor(public current: Date = new Date('2025-03-15T10:00:00Z')) {}

  readonly now = (): Date => new Date(this.current.getTime());

  set(iso: string): void {
    this.current = new Date(iso);
  }
}

export function newBank(clock = new TestClock()): { sut: SandboxBank; clock: TestClock } {
  return {
    sut: new SandboxBank({ scaBaseUrl: SCA_BASE_URL, now: clock.now, productRules: PRODUCT_RULES }),
    clock,
  };
}

export function request(
  operationId: string,
  parts: Partial<Omit<BankRequest, 'operationId'>> = {},
): BankRequest {
  return { operationId, params: {}, query: {}, headers: {}, body: undefined, tppId: TPP, ...parts };
}

export type Body = Record<string, unknown>;

export function bodyOf(response: BankResponse): Body {
  return response.body as Body;
}

export function expectError(
  response: BankResponse,
  status: number,
  code: string,
  path?: string,
): void {
  expect(response.status).toBe(status);
  const messages = (
    response.body as {
      tppMessages: { category: string; code: string; path?: string; text: string }[];
    }
  ).tppMessages;
  expect(messages[0]).toMatchObject({
    category: 'ERROR',
    code,
    ...(path === undefined ? {} : { path }),
  });
  expect(typeof messages[0].text).toBe('string');
}

const REDIRECT_HEADERS = {
  'tpp-redirect-uri': REDIRECT_URI,
  'tpp-nok-redirect-uri': NOK_REDIRECT_URI,
};

export interface Created {
  id: string;
  scaRedirect: string;
}

function created(response: BankResponse, idField: 'consentId' | 'paymentId'): Created {
  expect(response.status).toBe(201);
  const body = bodyOf(response);
  return {
    id: body[idField] as string,
    scaRedirect: (body._links as { scaRedirect: { href: string } }).scaRedirect.href,
  };
}

export interface AisConsentOptions {
  brandId?: string;
  access?: Body;
  validUntil?: string;
  frequencyPerDay?: number;
  headers?: Record<string, string | undefined>;
  tppId?: string;
}

export function createAisConsent(sut: SandboxBank, options: AisConsentOptions = {}): BankResponse {
  return sut.handle(
    request('createConsent', {
      params: { brandId: options.brandId ?? 'danube-bank' },
      headers: options.headers ?? REDIRECT_HEADERS,
      tppId: options.tppId ?? TPP,
      body: {
        access: options.access ?? {
          accounts: [{ iban: IBAN.aliceHuf }],
          balances: [{ iban: IBAN.aliceHuf }],
          transactions: [{ iban: IBAN.aliceHuf }],
        },
        recurringIndicator: true,
        validUntil: options.validUntil ?? '2025-06-30',
        ...(options.frequencyPerDay === undefined
          ? {}
          : { frequencyPerDay: options.frequencyPerDay }),
      },
    }),
  );
}

export function newAisConsent(sut: SandboxBank, options: AisConsentOptions = {}): Created {
  return created(createAisConsent(sut, options), 'consentId');
}

export function newCofConsent(
  sut: SandboxBank,
  iban: string,
  brandId = 'danube-bank',
  headers: Record<string, string> = REDIRECT_HEADERS,
): Created {
  return created(
    sut.handle(
      request('createCofConsent', { params: { brandId }, headers, body: { account: { iban } } }),
    ),
    'consentId',
  );
}

export function initiate(
  sut: SandboxBank,
  product: string,
  body: Body,
  brandId = 'danube-bank',
  headers: Record<string, string> = REDIRECT_HEADERS,
): BankResponse {
  return sut.handle(
    request('initiatePayment', { params: { brandId, paymentProduct: product }, headers, body }),
  );
}

export function newPayment(
  sut: SandboxBank,
  product: string,
  body: Body,
  brandId = 'danube-bank',
  headers: Record<string, string> = REDIRECT_HEADERS,
): Created {
  return created(initiate(sut, product, body, brandId, headers), 'paymentId');
}

export function domesticPayment(overrides: Body = {}): Body {
  return {
    instructedAmount: { currency: 'HUF', amount: '15000' },
    creditorName: 'Kovacs Janos',
    creditorAccount: { iban: 'HU38116000066000000001234561' },
    creditorType: 'INDIVIDUAL',
    remittanceInformationUnstructured: 'Invoice 2025-117',
    ...overrides,
  };
}

export function sepaPayment(overrides: Body = {}): Body {
  return {
    instructedAmount: { currency: 'EUR', amount: '123.50' },
    creditorName: 'Example Merchant GmbH',
    creditorAccount: { iban: 'DE89370400440532013000' },
    creditorType: 'COMPANY',
    creditorAgent: 'COBADEFFXXX',
    creditorAddress: {
      streetName: 'Hauptstrasse',
      buildingNumber: '12',
      townName: 'Berlin',
      postCode: '10115',
      country: 'DE',
    },
    remittanceInformationUnstructured: 'Order 88412',
    ...overrides,
  };
}

// ---------------------------------------------------------------- SCA pages

export function scaPath(href: string): string {
  return new URL(href).pathname;
}

export function openSca(sut: SandboxBank, scaRedirect: string): ScaResponse {
  return sut.handleSca({ method: 'GET', path: scaPath(scaRedirect), query: {}, form: {} });
}

export function login(
  sut: SandboxBank,
  scaRedirect: string,
  username = 'alice',
  password = `${username}-pass`,
): ScaResponse {
  return sut.handleSca({
    method: 'POST',
    path: `${scaPath(scaRedirect)}/login`,
    query: {},
    form: { username, password },
  });
}

export function sessionTokenOf(page: ScaResponse): string {
  const match = /name="session" value="([^"]+)"/.exec(page.body ?? '');
  if (!match) throw new Error(`no session token in page:\n${page.body ?? ''}`);
  return match[1];
}

export function decide(
  sut: SandboxBank,
  scaRedirect: string,
  form: Record<string, string | string[] | undefined>,
): ScaResponse {
  return sut.handleSca({
    method: 'POST',
    path: `${scaPath(scaRedirect)}/decision`,
    query: {},
    form,
  });
}

export interface AuthoriseOptions {
  username?: string;
  decision?: 'approve' | 'deny';
  accounts?: string[];
  debtorAccount?: string;
}

/** Logs in and decides; returns the decision answer (a 303 when it went through). */
export function authorise(
  sut: SandboxBank,
  scaRedirect: string,
  options: AuthoriseOptions = {},
): ScaResponse {
  const review = login(sut, scaRedirect, options.username ?? 'alice');
  return decide(sut, scaRedirect, {
    session: sessionTokenOf(review),
    decision: options.decision ?? 'approve',
    ...(options.accounts ? { accounts: options.accounts } : {}),
    ...(options.debtorAccount ? { debtorAccount: options.debtorAccount } : {}),
  });
}

/** A valid AIS consent of alice at danube-bank (by default on her HUF account with all three services). */
export function validAisConsent(sut: SandboxBank, options: AisConsentOptions = {}): string {
  const consent = newAisConsent(sut, options);
  expect(authorise(sut, consent.scaRedirect).status).toBe(303);
  return consent.id;
}

export function consentStatus(
  sut: SandboxBank,
  consentId: string,
  brandId = 'danube-bank',
): unknown {
  return bodyOf(sut.handle(request('getConsentStatus', { params: { brandId, consentId } })))
    .consentStatus;
}

/** The resourceId of an account of the consent, read with PSU-IP-Address so it does not count as unattended. */
export function accountIdOf(
  sut: SandboxBank,
  consentId: string,
  iban: string,
  brandId = 'danube-bank',
): string {
  const response = sut.handle(
    request('listAccounts', {
      params: { brandId },
      headers: { 'consent-id': consentId, 'psu-ip-address': PSU_IP },
    }),
  );
  const accounts = bodyOf(response).accounts as { resourceId: string; iban: string }[];
  const account = accounts.find((candidate) => candidate.iban === iban);
  if (!account) throw new Error(`${iban} not in consent ${consentId}`);
  return account.resourceId;
}

export function accountRead(
  sut: SandboxBank,
  operationId: string,
  consentId: string | undefined,
  params: Record<string, string> = {},
  extra: Partial<BankRequest> = {},
): BankResponse {
  return sut.handle(
    request(operationId, {
      params: { brandId: 'danube-bank', ...params },
      headers: consentId === undefined ? {} : { 'consent-id': consentId },
      ...extra,
    }),
  );
}
