import type { components } from '#src/client/portico-client.js';

type CreateConsentRequest = components['schemas']['CreateConsentRequest'];
type CreatePaymentRequest = components['schemas']['CreatePaymentRequest'];

export const ALICE = { username: 'alice', password: 'alice-pass' };
export const ALICE_HUF = 'HU75118000170000001234567817';
export const ALICE_EUR = 'HU80118000170000001234567824';
export const APP_REDIRECT = 'https://app.example/banking/return';
export const APP_NOK = 'https://app.example/banking/failed';
export const inDays = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

export function consentRequest(
  overrides: Partial<CreateConsentRequest> = {},
): CreateConsentRequest {
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

export function domesticPayment(
  overrides: Partial<CreatePaymentRequest> = {},
): CreatePaymentRequest {
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
