import { describe, expect, it } from '@jest/globals';
import {
  authorise,
  bodyOf,
  consentStatus,
  createAisConsent,
  expectError,
  newAisConsent,
  newBank,
  NOK_REDIRECT_URI,
  openSca,
  OTHER_TPP,
  REDIRECT_URI,
  request,
  SCA_BASE_URL,
  validAisConsent,
} from './fixtures.js';

const deleteConsent = (sut: ReturnType<typeof newBank>['sut'], consentId: string) =>
  sut.handle(request('deleteConsent', { params: { brandId: 'danube-bank', consentId } }));

describe('AIS consent lifecycle', () => {
  it('creates a consent as received with scaRedirect, self and status links', () => {
    const { sut } = newBank();
    const response = createAisConsent(sut);
    expect(response.status).toBe(201);
    const body = bodyOf(response);
    expect(body.consentStatus).toBe('received');
    expect(body.consentId).toMatch(/^ais-[0-9a-f-]{36}$/);
    expect(body._links).toEqual({
      scaRedirect: {
        href: expect.stringMatching(
          new RegExp(`^${SCA_BASE_URL}/sca/danube-bank/authorisations/[0-9a-f-]{36}$`),
        ),
      },
      self: { href: `/danube-bank/bg/v1/consents/${String(body.consentId)}` },
      status: { href: `/danube-bank/bg/v1/consents/${String(body.consentId)}/status` },
    });
    expect(response.headers).toEqual({
      Location: `/danube-bank/bg/v1/consents/${String(body.consentId)}`,
      'ASPSP-SCA-Approach': 'REDIRECT',
    });
  });

  it('refuses a consent without TPP-Redirect-URI with 400 FORMAT_ERROR', () => {
    const { sut } = newBank();
    expectError(
      createAisConsent(sut, { headers: { 'tpp-nok-redirect-uri': NOK_REDIRECT_URI } }),
      400,
      'FORMAT_ERROR',
      'TPP-Redirect-URI',
    );
  });

  it('refuses validUntil in the past with 400 PERIOD_INVALID but accepts today', () => {
    const { sut } = newBank();
    expectError(
      createAisConsent(sut, { validUntil: '2025-03-14' }),
      400,
      'PERIOD_INVALID',
      'validUntil',
    );
    expect(createAisConsent(sut, { validUntil: '2025-03-15' }).status).toBe(201);
  });

  it('answers an unknown brand with 404 RESOURCE_UNKNOWN', () => {
    const { sut } = newBank();
    expectError(
      createAisConsent(sut, { brandId: 'no-such-bank' }),
      404,
      'RESOURCE_UNKNOWN',
      'brandId',
    );
  });

  it('returns the consent details as requested', () => {
    const { sut } = newBank();
    const { id } = newAisConsent(sut, { frequencyPerDay: 2 });
    const response = sut.handle(
      request('getConsent', { params: { brandId: 'danube-bank', consentId: id } }),
    );
    expect(response.status).toBe(200);
    expect(bodyOf(response)).toEqual({
      access: {
        accounts: [{ iban: 'HU75118000170000001234567817' }],
        balances: [{ iban: 'HU75118000170000001234567817' }],
        transactions: [{ iban: 'HU75118000170000001234567817' }],
      },
      recurringIndicator: true,
      validUntil: '2025-06-30',
      consentStatus: 'received',
      _links: {
        self: { href: `/danube-bank/bg/v1/consents/${id}` },
        status: { href: `/danube-bank/bg/v1/consents/${id}/status` },
      },
    });
  });

  it("answers an unknown consent, another TPP's consent or another brand's with 403 CONSENT_UNKNOWN", () => {
    const { sut } = newBank();
    const { id } = newAisConsent(sut);
    expectError(
      sut.handle(
        request('getConsent', { params: { brandId: 'danube-bank', consentId: 'ais-nope' } }),
      ),
      403,
      'CONSENT_UNKNOWN',
    );
    expectError(
      sut.handle(
        request('getConsentStatus', {
          params: { brandId: 'danube-bank', consentId: id },
          tppId: OTHER_TPP,
        }),
      ),
      403,
      'CONSENT_UNKNOWN',
    );
    expectError(
      sut.handle(
        request('deleteConsent', {
          params: { brandId: 'danube-bank', consentId: id },
          tppId: OTHER_TPP,
        }),
      ),
      403,
      'CONSENT_UNKNOWN',
    );
    expectError(
      sut.handle(request('getConsent', { params: { brandId: 'vistula-bank', consentId: id } })),
      403,
      'CONSENT_UNKNOWN',
    );
    expect(consentStatus(sut, id)).toBe('received');
  });

  it('becomes valid when the PSU approves and sends the PSU to TPP-Redirect-URI', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut);
    const answer = authorise(sut, scaRedirect);
    expect(answer.status).toBe(303);
    expect(answer.headers?.Location).toBe(REDIRECT_URI);
    expect(consentStatus(sut, id)).toBe('valid');
  });

  it('becomes rejected when the PSU denies and sends the PSU to TPP-Nok-Redirect-URI', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut);
    const answer = authorise(sut, scaRedirect, { decision: 'deny' });
    expect(answer.status).toBe(303);
    expect(answer.headers?.Location).toBe(NOK_REDIRECT_URI);
    expect(consentStatus(sut, id)).toBe('rejected');
  });

  it('falls back to TPP-Redirect-URI on denial when no nok URI was given', () => {
    const { sut } = newBank();
    const { scaRedirect } = newAisConsent(sut, { headers: { 'tpp-redirect-uri': REDIRECT_URI } });
    expect(authorise(sut, scaRedirect, { decision: 'deny' }).headers?.Location).toBe(REDIRECT_URI);
  });

  it('DELETE turns received and valid consents into terminatedByTpp with 200 and no body', () => {
    const { sut } = newBank();
    const received = newAisConsent(sut).id;
    const valid = validAisConsent(sut);
    for (const consentId of [received, valid]) {
      const response = deleteConsent(sut, consentId);
      expect(response).toEqual({ status: 200 });
      expect(consentStatus(sut, consentId)).toBe('terminatedByTpp');
    }
  });

  it('DELETE repeated on a terminatedByTpp consent answers 200 again', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut);
    deleteConsent(sut, consentId);
    expect(deleteConsent(sut, consentId).status).toBe(200);
  });

  it('DELETE of a rejected, revokedByPsu or expired consent answers 409 STATUS_INVALID', () => {
    const { sut, clock } = newBank();
    const rejected = newAisConsent(sut);
    authorise(sut, rejected.scaRedirect, { decision: 'deny' });
    const revoked = validAisConsent(sut);
    sut.control.revokeConsentAsPsu(revoked);
    const expiring = validAisConsent(sut, { validUntil: '2025-03-20' });
    expectError(deleteConsent(sut, rejected.id), 409, 'STATUS_INVALID');
    expectError(deleteConsent(sut, revoked), 409, 'STATUS_INVALID');
    clock.set('2025-03-21T00:00:00Z');
    expectError(deleteConsent(sut, expiring), 409, 'STATUS_INVALID');
    expect(consentStatus(sut, expiring)).toBe('expired');
  });

  it('stays valid through the whole validUntil day (UTC) and reads expired from the next day', () => {
    const { sut, clock } = newBank();
    const consentId = validAisConsent(sut, { validUntil: '2025-03-20' });
    clock.set('2025-03-20T23:59:59Z');
    expect(consentStatus(sut, consentId)).toBe('valid');
    clock.set('2025-03-21T00:00:00Z');
    expect(consentStatus(sut, consentId)).toBe('expired');
    expect(
      bodyOf(sut.handle(request('getConsent', { params: { brandId: 'danube-bank', consentId } })))
        .consentStatus,
    ).toBe('expired');
  });

  it('becomes revokedByPsu through the sandbox control, only from valid', () => {
    const { sut } = newBank();
    const consentId = validAisConsent(sut);
    const received = newAisConsent(sut).id;
    expect(sut.control.revokeConsentAsPsu(consentId)).toBe(true);
    expect(consentStatus(sut, consentId)).toBe('revokedByPsu');
    expect(sut.control.revokeConsentAsPsu(consentId)).toBe(false);
    expect(sut.control.revokeConsentAsPsu(received)).toBe(false);
    expect(sut.control.revokeConsentAsPsu('ais-unknown')).toBe(false);
  });

  it('closes the authorisation of a consent the TPP terminated before the PSU decided', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut);
    deleteConsent(sut, id);
    expect(openSca(sut, scaRedirect).status).toBe(410);
    expect(consentStatus(sut, id)).toBe('terminatedByTpp');
  });

  it('counts handled operations by operationId and forgets everything on reset', () => {
    const { sut } = newBank();
    const { id } = newAisConsent(sut);
    consentStatus(sut, id);
    consentStatus(sut, id);
    expect(sut.control.calls()).toEqual({ createConsent: 1, getConsentStatus: 2 });
    sut.control.reset();
    expect(sut.control.calls()).toEqual({});
    expectError(
      sut.handle(
        request('getConsentStatus', { params: { brandId: 'danube-bank', consentId: id } }),
      ),
      403,
      'CONSENT_UNKNOWN',
    );
  });
});
