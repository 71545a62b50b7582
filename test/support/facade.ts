import type { TestGateway } from './test-gateway.js';

export interface FacadeResponse<T = Record<string, unknown>> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
}

/** Calls the facade in process (Fastify inject) with an API key. */
export function facade(gateway: TestGateway, key: string) {
  const send = async <T>(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<FacadeResponse<T>> => {
    const response = await gateway.app.inject({
      method,
      url,
      payload: payload as never,
      headers: { authorization: `Bearer ${key}`, ...headers },
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      body: (response.body ? response.json() : undefined) as T,
    };
  };
  return {
    get: <T = Record<string, unknown>>(url: string, headers?: Record<string, string>) =>
      send<T>('GET', url, undefined, headers),
    post: <T = Record<string, unknown>>(
      url: string,
      payload: unknown,
      headers?: Record<string, string>,
    ) => send<T>('POST', url, payload, headers),
    delete: <T = Record<string, unknown>>(url: string, headers?: Record<string, string>) =>
      send<T>('DELETE', url, undefined, headers),
  };
}

export const ALICE = { username: 'alice', password: 'alice-pass' };
export const ALICE_HUF = 'HU75118000170000001234567817';
export const ALICE_EUR = 'HU80118000170000001234567824';
export const APP_REDIRECT = 'https://app.example/banking/return';
export const APP_NOK = 'https://app.example/banking/failed';
export const inDays = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

export function consentRequest(overrides: Record<string, unknown> = {}) {
  return {
    brandId: 'danube-bank',
    access: {
      accounts: [{ iban: ALICE_HUF }],
      balances: [{ iban: ALICE_HUF }],
      transactions: [{ iban: ALICE_HUF }],
    },
    recurringIndicator: true,
    validUntil: inDays(30),
    frequencyPerDay: 2,
    redirectUri: APP_REDIRECT,
    nokRedirectUri: APP_NOK,
    psuReference: 'customer-4711',
    ...overrides,
  };
}

export function domesticPayment(overrides: Record<string, unknown> = {}) {
  return {
    brandId: 'danube-bank',
    paymentProduct: 'domestic-credit-transfers',
    payment: {
      instructedAmount: { currency: 'HUF', amount: '15000.00' },
      creditorName: 'Kovacs Peter',
      creditorAccount: { iban: 'HU42117730161111101800000000' },
      creditorType: 'INDIVIDUAL',
      remittanceInformationUnstructured: 'Rent November',
    },
    redirectUri: APP_REDIRECT,
    nokRedirectUri: APP_NOK,
    ...overrides,
  };
}
