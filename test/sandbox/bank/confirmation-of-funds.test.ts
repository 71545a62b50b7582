import { describe, expect, it } from '@jest/globals';
import { type SandboxBank } from '#src/sandbox/open-banking/bank/sandbox-bank.js';
import {
  authorise,
  bodyOf,
  expectError,
  IBAN,
  login,
  newBank,
  newCofConsent,
  OTHER_TPP,
  REDIRECT_URI,
  request,
  validAisConsent,
} from './fixtures.js';

function confirm(
  sut: SandboxBank,
  consentId: string | undefined,
  iban: string,
  currency: string,
  amount: string,
  brandId = 'danube-bank',
) {
  return sut.handle(
    request('confirmFunds', {
      params: { brandId },
      headers: consentId === undefined ? {} : { 'consent-id': consentId },
      body: { account: { iban }, instructedAmount: { currency, amount } },
    }),
  );
}

function validCofConsent(
  sut: SandboxBank,
  iban: string,
  username = 'alice',
  brandId = 'danube-bank',
): string {
  const consent = newCofConsent(sut, iban, brandId);
  expect(authorise(sut, consent.scaRedirect, { username }).status).toBe(303);
  return consent.id;
}

describe('confirmation-of-funds consents', () => {
  it('creates a consent as received, then valid after SCA, with GET, status and DELETE', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newCofConsent(sut, IBAN.aliceEur);
    const params = { brandId: 'danube-bank', consentId: id };
    const again = sut.handle(
      request('createCofConsent', {
        params: { brandId: 'danube-bank' },
        headers: { 'tpp-redirect-uri': REDIRECT_URI },
        body: { account: { iban: IBAN.aliceEur } },
      }),
    );
    expect(again.headers).toEqual({
      Location: `/danube-bank/bg/v2/consents/confirmation-of-funds/${String(bodyOf(again).consentId)}`,
      'ASPSP-SCA-Approach': 'REDIRECT',
    });
    expect(bodyOf(sut.handle(request('getCofConsent', { params })))).toEqual({
      account: { iban: IBAN.aliceEur },
      consentStatus: 'received',
    });
    expect(authorise(sut, scaRedirect).headers?.Location).toBe(REDIRECT_URI);
    expect(bodyOf(sut.handle(request('getCofConsentStatus', { params })))).toEqual({
      consentStatus: 'valid',
    });
    expect(sut.handle(request('deleteCofConsent', { params }))).toEqual({ status: 200 });
    expect(bodyOf(sut.handle(request('getCofConsentStatus', { params })))).toEqual({
      consentStatus: 'terminatedByTpp',
    });
  });

  it('refuses creation without TPP-Redirect-URI with 400 FORMAT_ERROR', () => {
    const { sut } = newBank();
    const response = sut.handle(
      request('createCofConsent', {
        params: { brandId: 'danube-bank' },
        body: { account: { iban: IBAN.aliceEur } },
      }),
    );
    expectError(response, 400, 'FORMAT_ERROR', 'TPP-Redirect-URI');
  });

  it("answers another TPP's consent or an AIS consent id on the CoF path with 403 CONSENT_UNKNOWN", () => {
    const { sut } = newBank();
    const { id } = newCofConsent(sut, IBAN.aliceEur);
    const ais = validAisConsent(sut);
    expectError(
      sut.handle(
        request('getCofConsent', {
          params: { brandId: 'danube-bank', consentId: id },
          tppId: OTHER_TPP,
        }),
      ),
      403,
      'CONSENT_UNKNOWN',
    );
    expectError(
      sut.handle(request('getCofConsent', { params: { brandId: 'danube-bank', consentId: ais } })),
      403,
      'CONSENT_UNKNOWN',
    );
  });

  it('does not let the PSU approve a consent on an account that is not theirs', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newCofConsent(sut, IBAN.bobHufLow);
    const review = login(sut, scaRedirect, 'alice');
    expect(review.status).toBe(403);
    expect(review.body).not.toContain('value="approve"');
    expect(
      bodyOf(
        sut.handle(
          request('getCofConsentStatus', { params: { brandId: 'danube-bank', consentId: id } }),
        ),
      ),
    ).toEqual({ consentStatus: 'received' });
  });
});

describe('funds confirmation', () => {
  it('answers fundsAvailable true up to and including interimAvailable, false above', () => {
    const { sut } = newBank();
    const consentId = validCofConsent(sut, IBAN.aliceEur);
    expect(confirm(sut, consentId, IBAN.aliceEur, 'EUR', '100.00')).toEqual({
      status: 200,
      body: { fundsAvailable: true },
    });
    expect(bodyOf(confirm(sut, consentId, IBAN.aliceEur, 'EUR', '2450.75'))).toEqual({
      fundsAvailable: true,
    });
    expect(bodyOf(confirm(sut, consentId, IBAN.aliceEur, 'EUR', '2450.751'))).toEqual({
      fundsAvailable: false,
    });
    expect(bodyOf(confirm(sut, consentId, IBAN.aliceEur, 'EUR', '99999'))).toEqual({
      fundsAvailable: false,
    });
  });

  it('answers false on a low balance account', () => {
    const { sut } = newBank();
    const consentId = validCofConsent(sut, IBAN.bobEurLow, 'bob', 'vistula-bank');
    expect(bodyOf(confirm(sut, consentId, IBAN.bobEurLow, 'EUR', '12.41', 'vistula-bank'))).toEqual(
      { fundsAvailable: false },
    );
    expect(bodyOf(confirm(sut, consentId, IBAN.bobEurLow, 'EUR', '12.40', 'vistula-bank'))).toEqual(
      { fundsAvailable: true },
    );
  });

  it('answers a request for another account than the consent with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const consentId = validCofConsent(sut, IBAN.aliceEur);
    expectError(confirm(sut, consentId, IBAN.aliceHuf, 'HUF', '1'), 401, 'CONSENT_INVALID');
  });

  it('answers an AIS consent in Consent-ID with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const ais = validAisConsent(sut);
    expectError(confirm(sut, ais, IBAN.aliceHuf, 'HUF', '1'), 401, 'CONSENT_INVALID');
  });

  it('answers a consent that is not valid yet with 401 CONSENT_INVALID', () => {
    const { sut } = newBank();
    const { id } = newCofConsent(sut, IBAN.aliceEur);
    expectError(confirm(sut, id, IBAN.aliceEur, 'EUR', '1'), 401, 'CONSENT_INVALID');
  });

  it('answers a currency other than the account currency with 400 PARAMETER_NOT_CONSISTENT', () => {
    const { sut } = newBank();
    const consentId = validCofConsent(sut, IBAN.aliceEur);
    expectError(
      confirm(sut, consentId, IBAN.aliceEur, 'HUF', '1'),
      400,
      'PARAMETER_NOT_CONSISTENT',
      'instructedAmount.currency',
    );
  });

  it('answers a missing or unknown Consent-ID with 400 FORMAT_ERROR and 403 CONSENT_UNKNOWN', () => {
    const { sut } = newBank();
    expectError(
      confirm(sut, undefined, IBAN.aliceEur, 'EUR', '1'),
      400,
      'FORMAT_ERROR',
      'Consent-ID',
    );
    expectError(confirm(sut, 'cof-unknown', IBAN.aliceEur, 'EUR', '1'), 403, 'CONSENT_UNKNOWN');
  });
});
