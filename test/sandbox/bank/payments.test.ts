import { describe, expect, it } from '@jest/globals';
import { SandboxBank } from '#src/sandbox/open-banking/bank/sandbox-bank.js';
import {
  accountIdOf,
  accountRead,
  authorise,
  bodyOf,
  domesticPayment,
  expectError,
  IBAN,
  initiate,
  login,
  newBank,
  newPayment,
  NOK_REDIRECT_URI,
  OTHER_TPP,
  PSU_IP,
  REDIRECT_URI,
  request,
  SCA_BASE_URL,
  sepaPayment,
  validAisConsent,
} from './fixtures.js';

const DOMESTIC = 'domestic-credit-transfers';
const SEPA = 'sepa-credit-transfers';
const CROSS_BORDER = 'cross-border-credit-transfers';

function statusOf(
  sut: SandboxBank,
  paymentId: string,
  product = DOMESTIC,
  brandId = 'danube-bank',
): unknown {
  return bodyOf(
    sut.handle(
      request('getPaymentStatus', { params: { brandId, paymentProduct: product, paymentId } }),
    ),
  ).transactionStatus;
}

function availableOf(
  sut: SandboxBank,
  iban: string,
  brandId = 'danube-bank',
  username = 'alice',
): string {
  const consent = validAisConsentFor(sut, iban, brandId, username);
  const accountId = accountIdOf(sut, consent, iban, brandId);
  const response = accountRead(
    sut,
    'getBalances',
    consent,
    { brandId, accountId },
    { headers: { 'consent-id': consent, 'psu-ip-address': PSU_IP } },
  );
  const balances = bodyOf(response).balances as {
    balanceType: string;
    balanceAmount: { amount: string };
  }[];
  return balances.find((balance) => balance.balanceType === 'interimAvailable')!.balanceAmount
    .amount;
}

function validAisConsentFor(
  sut: SandboxBank,
  iban: string,
  brandId: string,
  username: string,
): string {
  const created = sut.handle(
    request('createConsent', {
      params: { brandId },
      headers: { 'tpp-redirect-uri': REDIRECT_URI },
      body: {
        access: { balances: [{ iban }], transactions: [{ iban }] },
        recurringIndicator: false,
        validUntil: '2025-03-31',
      },
    }),
  );
  const { consentId, _links } = bodyOf(created) as {
    consentId: string;
    _links: { scaRedirect: { href: string } };
  };
  authorise(sut, _links.scaRedirect.href, { username });
  return consentId;
}

describe('payment product rules (from x-portico-product-rules)', () => {
  it('creates a payment as RCVD with scaRedirect, self and status links', () => {
    const { sut } = newBank();
    const response = initiate(sut, DOMESTIC, domesticPayment());
    expect(response.status).toBe(201);
    const body = bodyOf(response);
    expect(body.transactionStatus).toBe('RCVD');
    expect(body.paymentId).toMatch(/^pay-[0-9a-f-]{36}$/);
    const self = `/danube-bank/bg/v1/payments/${DOMESTIC}/${String(body.paymentId)}`;
    expect(body._links).toEqual({
      scaRedirect: {
        href: expect.stringMatching(new RegExp(`^${SCA_BASE_URL}/sca/danube-bank/authorisations/`)),
      },
      self: { href: self },
      status: { href: `${self}/status` },
    });
  });

  it('refuses a SEPA payment without creditorAgent with 400 FORMAT_ERROR on creditorAgent', () => {
    const { sut } = newBank();
    const { creditorAgent: _omitted, ...body } = sepaPayment();
    expectError(initiate(sut, SEPA, body), 400, 'FORMAT_ERROR', 'creditorAgent');
  });

  it('refuses a SEPA payment without creditorAddress once, on creditorAddress', () => {
    const { sut } = newBank();
    const { creditorAddress: _omitted, ...body } = sepaPayment();
    const response = initiate(sut, SEPA, body);
    expect(bodyOf(response).tppMessages).toEqual([
      {
        category: 'ERROR',
        code: 'FORMAT_ERROR',
        path: 'creditorAddress',
        text: expect.any(String),
      },
    ]);
  });

  it('refuses a cross-border payment without creditorAddress.country with 400 FORMAT_ERROR on creditorAddress.country', () => {
    const { sut } = newBank();
    expectError(
      initiate(sut, CROSS_BORDER, sepaPayment({ creditorAddress: { townName: 'London' } })),
      400,
      'FORMAT_ERROR',
      'creditorAddress.country',
    );
    const { creditorAddress: _omitted, ...withoutAddress } = sepaPayment();
    expectError(
      initiate(sut, CROSS_BORDER, withoutAddress),
      400,
      'FORMAT_ERROR',
      'creditorAddress.country',
    );
  });

  it('accepts a cross-border payment with only creditorAddress.country', () => {
    const { sut } = newBank();
    expect(
      initiate(
        sut,
        CROSS_BORDER,
        sepaPayment({
          instructedAmount: { currency: 'USD', amount: '990.00' },
          creditorAddress: { country: 'GB' },
        }),
      ).status,
    ).toBe(201);
  });

  it('refuses EUR on a domestic payment with 400 PARAMETER_NOT_CONSISTENT', () => {
    const { sut } = newBank();
    expectError(
      initiate(
        sut,
        DOMESTIC,
        domesticPayment({ instructedAmount: { currency: 'EUR', amount: '10' } }),
      ),
      400,
      'PARAMETER_NOT_CONSISTENT',
      'instructedAmount.currency',
    );
    expect(
      initiate(
        sut,
        DOMESTIC,
        domesticPayment({ instructedAmount: { currency: 'PLN', amount: '10' } }),
      ).status,
    ).toBe(201);
  });

  it('accepts the alias cross-border-credit-transfer and serves the payment under either spelling', () => {
    const { sut } = newBank();
    const { id } = newPayment(sut, 'cross-border-credit-transfer', sepaPayment());
    expect(statusOf(sut, id, 'cross-border-credit-transfer')).toBe('RCVD');
    expect(statusOf(sut, id, CROSS_BORDER)).toBe('RCVD');
  });

  it('answers an unknown product with 404 PRODUCT_UNKNOWN', () => {
    const { sut } = newBank();
    expectError(
      initiate(sut, 'instant-credit-transfers', domesticPayment()),
      404,
      'PRODUCT_UNKNOWN',
      'paymentProduct',
    );
  });

  it('answers a product the brand does not offer with 403 PRODUCT_INVALID, before looking at the body', () => {
    const { sut } = newBank();
    expectError(
      initiate(sut, DOMESTIC, {}, 'aegean-bank'),
      403,
      'PRODUCT_INVALID',
      'paymentProduct',
    );
    expect(newPayment(sut, 'sepa-credit-transfers', sepaPayment(), 'aegean-bank').id).toMatch(
      /^pay-/,
    );
  });

  it('answers an unknown product with 404 PRODUCT_UNKNOWN whatever the body holds', () => {
    const { sut } = newBank();
    expectError(initiate(sut, 'instant-credit-transfers', {}), 404, 'PRODUCT_UNKNOWN');
  });

  it('tells where the created payment lives and that its PSU authorises by redirect', () => {
    const { sut } = newBank();
    const response = initiate(sut, DOMESTIC, domesticPayment());
    const { paymentId, _links } = bodyOf(response) as {
      paymentId: string;
      _links: { self: { href: string } };
    };
    expect(response.headers).toEqual({
      Location: `/danube-bank/bg/v1/payments/${DOMESTIC}/${paymentId}`,
      'ASPSP-SCA-Approach': 'REDIRECT',
    });
    expect(_links.self.href).toBe(response.headers?.Location);
  });

  it('enforces whatever rules object it is given rather than a built-in matrix', () => {
    const sut = new SandboxBank({
      scaBaseUrl: SCA_BASE_URL,
      now: () => new Date('2025-03-15T10:00:00Z'),
      productRules: {
        'instant-transfers': {
          aliases: ['instant'],
          currencies: ['EUR'],
          required: ['debtorAccount.iban'],
        },
      },
    });
    expectError(
      initiate(
        sut,
        'instant',
        domesticPayment({ instructedAmount: { currency: 'EUR', amount: '1' } }),
      ),
      400,
      'FORMAT_ERROR',
      'debtorAccount.iban',
    );
    expectError(
      initiate(sut, 'instant', domesticPayment({ debtorAccount: { iban: IBAN.aliceEur } })),
      400,
      'PARAMETER_NOT_CONSISTENT',
    );
    expectError(initiate(sut, DOMESTIC, domesticPayment()), 404, 'PRODUCT_UNKNOWN');
  });

  it('refuses a payment without TPP-Redirect-URI with 400 FORMAT_ERROR', () => {
    const { sut } = newBank();
    expectError(
      initiate(sut, DOMESTIC, domesticPayment(), 'danube-bank', {}),
      400,
      'FORMAT_ERROR',
      'TPP-Redirect-URI',
    );
  });
});

describe('payment execution', () => {
  it('settles to ACSC when the PSU approves with enough funds, debiting the account and booking the transfer', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newPayment(
      sut,
      DOMESTIC,
      domesticPayment({ instructedAmount: { currency: 'HUF', amount: '20000.5' } }),
    );
    const answer = authorise(sut, scaRedirect, { debtorAccount: IBAN.aliceHuf });
    expect(answer.status).toBe(303);
    expect(answer.headers?.Location).toBe(REDIRECT_URI);
    expect(statusOf(sut, id)).toBe('ACSC');
    expect(availableOf(sut, IBAN.aliceHuf)).toBe('1500340.00');
    const payment = bodyOf(
      sut.handle(
        request('getPayment', {
          params: { brandId: 'danube-bank', paymentProduct: DOMESTIC, paymentId: id },
        }),
      ),
    );
    expect(payment).toMatchObject({
      transactionStatus: 'ACSC',
      paymentId: id,
      paymentDetails: {
        ...domesticPayment({ instructedAmount: { currency: 'HUF', amount: '20000.5' } }),
        debtorAccount: { iban: IBAN.aliceHuf },
      },
    });
    const consentId = validAisConsent(sut);
    const accountId = accountIdOf(sut, consentId, IBAN.aliceHuf);
    const report = bodyOf(
      accountRead(
        sut,
        'getTransactions',
        consentId,
        { accountId },
        { query: { dateFrom: '2025-03-15', dateTo: '2025-03-15' } },
      ),
    ).transactions as {
      booked: { creditorName: string; transactionAmount: { amount: string } }[];
    };
    expect(report.booked).toEqual([
      expect.objectContaining({
        creditorName: 'Kovacs Janos',
        transactionAmount: { currency: 'HUF', amount: '-20000.50' },
      }),
    ]);
  });

  it('uses the debtorAccount given at initiation', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newPayment(
      sut,
      SEPA,
      sepaPayment({ debtorAccount: { iban: IBAN.aliceEur } }),
    );
    const review = login(sut, scaRedirect);
    expect(review.body).toContain(IBAN.aliceEur);
    expect(review.body).not.toContain('type="radio"');
    expect(authorise(sut, scaRedirect).status).toBe(303);
    expect(statusOf(sut, id, SEPA)).toBe('ACSC');
    expect(availableOf(sut, IBAN.aliceEur)).toBe('2327.25');
  });

  it('rejects (RJCT) on insufficient funds and sends the PSU to the nok URI without moving money', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newPayment(
      sut,
      DOMESTIC,
      domesticPayment({ instructedAmount: { currency: 'HUF', amount: '48000.01' } }),
    );
    const answer = authorise(sut, scaRedirect, { username: 'bob', debtorAccount: IBAN.bobHufLow });
    expect(answer.headers?.Location).toBe(NOK_REDIRECT_URI);
    expect(statusOf(sut, id)).toBe('RJCT');
    expect(availableOf(sut, IBAN.bobHufLow, 'danube-bank', 'bob')).toBe('48000.00');
  });

  it('rejects (RJCT) a payment from a blocked account or in another currency than the account', () => {
    const { sut } = newBank();
    const blocked = newPayment(
      sut,
      DOMESTIC,
      domesticPayment({ instructedAmount: { currency: 'HUF', amount: '1' } }),
    );
    authorise(sut, blocked.scaRedirect, { debtorAccount: IBAN.aliceBlockedHuf });
    expect(statusOf(sut, blocked.id)).toBe('RJCT');
    const mismatch = newPayment(
      sut,
      DOMESTIC,
      domesticPayment({ instructedAmount: { currency: 'PLN', amount: '1' } }),
    );
    authorise(sut, mismatch.scaRedirect, { debtorAccount: IBAN.aliceHuf });
    expect(statusOf(sut, mismatch.id)).toBe('RJCT');
  });

  it('rejects (RJCT) when the PSU denies', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newPayment(sut, DOMESTIC, domesticPayment());
    expect(authorise(sut, scaRedirect, { decision: 'deny' }).headers?.Location).toBe(
      NOK_REDIRECT_URI,
    );
    expect(statusOf(sut, id)).toBe('RJCT');
  });

  it('offers the PSU a choice of accounts when the payment names no debtorAccount, and insists on one', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newPayment(sut, DOMESTIC, domesticPayment());
    const review = login(sut, scaRedirect);
    expect(review.body).toContain(
      `type="radio" id="debtorAccount-0" name="debtorAccount" value="${IBAN.aliceHuf}"`,
    );
    const answer = authorise(sut, scaRedirect);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('Choose the account to pay from.');
    expect(statusOf(sut, id)).toBe('RCVD');
  });

  it("shows an error page and no Approve button when debtorAccount is not the PSU's", () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newPayment(
      sut,
      DOMESTIC,
      domesticPayment({ debtorAccount: { iban: IBAN.bobHufLow } }),
    );
    const review = login(sut, scaRedirect, 'alice');
    expect(review.status).toBe(403);
    expect(review.body).toContain('not yours');
    expect(review.body).not.toContain('value="approve"');
    expect(authorise(sut, scaRedirect, { decision: 'approve' }).status).toBe(403);
    expect(statusOf(sut, id)).toBe('RCVD');
  });
});

describe('payment reads', () => {
  it("answers an unknown payment or another TPP's with 404 RESOURCE_UNKNOWN", () => {
    const { sut } = newBank();
    const { id } = newPayment(sut, DOMESTIC, domesticPayment());
    expectError(
      sut.handle(
        request('getPayment', {
          params: { brandId: 'danube-bank', paymentProduct: DOMESTIC, paymentId: 'pay-unknown' },
        }),
      ),
      404,
      'RESOURCE_UNKNOWN',
      'paymentId',
    );
    expectError(
      sut.handle(
        request('getPayment', {
          params: { brandId: 'danube-bank', paymentProduct: DOMESTIC, paymentId: id },
          tppId: OTHER_TPP,
        }),
      ),
      404,
      'RESOURCE_UNKNOWN',
    );
    expectError(
      sut.handle(
        request('getPaymentStatus', {
          params: { brandId: 'vistula-bank', paymentProduct: DOMESTIC, paymentId: id },
        }),
      ),
      404,
      'RESOURCE_UNKNOWN',
    );
  });

  it('answers a payment read under another product with 404 RESOURCE_UNKNOWN', () => {
    const { sut } = newBank();
    const { id } = newPayment(sut, DOMESTIC, domesticPayment());
    expectError(
      sut.handle(
        request('getPaymentStatus', {
          params: { brandId: 'danube-bank', paymentProduct: SEPA, paymentId: id },
        }),
      ),
      404,
      'RESOURCE_UNKNOWN',
    );
    expectError(
      sut.handle(
        request('getPaymentStatus', {
          params: { brandId: 'danube-bank', paymentProduct: 'nope', paymentId: id },
        }),
      ),
      404,
      'PRODUCT_UNKNOWN',
    );
  });

  it('returns the payment as initiated while RCVD', () => {
    const { sut } = newBank();
    const { id } = newPayment(sut, DOMESTIC, domesticPayment());
    const response = sut.handle(
      request('getPayment', {
        params: { brandId: 'danube-bank', paymentProduct: DOMESTIC, paymentId: id },
      }),
    );
    const self = `/danube-bank/bg/v1/payments/${DOMESTIC}/${id}`;
    expect(response).toEqual({
      status: 200,
      body: {
        transactionStatus: 'RCVD',
        paymentId: id,
        paymentDetails: domesticPayment(),
        _links: { self: { href: self }, status: { href: `${self}/status` } },
      },
    });
  });
});
