import { describe, expect, it } from '@jest/globals';
import { SandboxBank } from '#src/sandbox/open-banking/bank/sandbox-bank.js';
import {
  accountRead,
  authorise,
  bodyOf,
  consentStatus,
  decide,
  domesticPayment,
  IBAN,
  login,
  newAisConsent,
  newBank,
  newPayment,
  NOK_REDIRECT_URI,
  openSca,
  PRODUCT_RULES,
  REDIRECT_URI,
  request,
  scaPath,
  sessionTokenOf,
} from './fixtures.js';

describe('SCA pages', () => {
  it('shows a labelled login form with the brand name and the sandbox credentials, without JavaScript', () => {
    const { sut } = newBank();
    const { scaRedirect } = newAisConsent(sut);
    const page = openSca(sut, scaRedirect);
    expect(page.status).toBe(200);
    expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Danube Bank Hungary Zrt. (sandbox)');
    expect(page.body).toContain('alice / alice-pass');
    expect(page.body).toContain('bob / bob-pass');
    expect(page.body).not.toContain('carol / carol-pass');
    expect(page.body).toContain('<label for="username">');
    expect(page.body).toContain('<label for="password">');
    expect(page.body).toContain(`action="${scaRedirect}/login"`);
    expect(page.body).not.toMatch(/<script/i);
  });

  it('answers wrong credentials, or a user without accounts at the brand, with the form again and 401', () => {
    const { sut } = newBank();
    const { scaRedirect } = newAisConsent(sut);
    for (const [username, password] of [
      ['alice', 'wrong'],
      ['mallory', 'mallory-pass'],
      ['carol', 'carol-pass'],
    ]) {
      const page = login(sut, scaRedirect, username, password);
      expect(page.status).toBe(401);
      expect(page.body).toContain('Unknown user name or wrong password');
      expect(page.body).toContain('name="password"');
    }
  });

  it('reviews what an AIS consent asks: services, IBANs, validUntil and frequency', () => {
    const { sut } = newBank();
    const { scaRedirect } = newAisConsent(sut, {
      frequencyPerDay: 3,
      access: { balances: [{ iban: IBAN.aliceHuf }], transactions: [{ iban: IBAN.aliceEur }] },
    });
    const review = login(sut, scaRedirect);
    expect(review.status).toBe(200);
    expect(review.body).toContain(`<dt>Balances</dt><dd>${IBAN.aliceHuf}</dd>`);
    expect(review.body).toContain(`<dt>Transactions</dt><dd>${IBAN.aliceEur}</dd>`);
    expect(review.body).toContain('<dd>2025-06-30</dd>');
    expect(review.body).toContain('At most 3 times a day');
    expect(review.body).toContain('value="approve"');
    expect(review.body).toContain('value="deny"');
  });

  it('lets the PSU choose the accounts of a bank-offered consent, which then grant all three services', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut, { access: {} });
    const review = login(sut, scaRedirect);
    expect(review.body).toContain(
      `type="checkbox" id="accounts-0" name="accounts" value="${IBAN.aliceHuf}"`,
    );
    expect(review.body).toContain(IBAN.aliceBlockedHuf);
    expect(review.body).not.toContain(IBAN.aliceAegeanEur);
    const answer = decide(sut, scaRedirect, {
      session: sessionTokenOf(review),
      decision: 'approve',
      accounts: [IBAN.aliceHuf, IBAN.aliceEur],
    });
    expect(answer.status).toBe(303);
    const chosen = [{ iban: IBAN.aliceHuf }, { iban: IBAN.aliceEur }];
    expect(
      bodyOf(
        sut.handle(request('getConsent', { params: { brandId: 'danube-bank', consentId: id } })),
      ),
    ).toMatchObject({
      consentStatus: 'valid',
      access: { accounts: chosen, balances: chosen, transactions: chosen },
    });
    const listed = bodyOf(accountRead(sut, 'listAccounts', id)).accounts as { iban: string }[];
    expect(listed.map((account) => account.iban)).toEqual([IBAN.aliceHuf, IBAN.aliceEur]);
  });

  it('shows the review again with an error when a bank-offered consent is approved without accounts', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut, { access: {} });
    const review = login(sut, scaRedirect);
    const again = decide(sut, scaRedirect, {
      session: sessionTokenOf(review),
      decision: 'approve',
    });
    expect(again.status).toBe(400);
    expect(again.body).toContain('Choose at least one of your accounts to share.');
    expect(again.body).toContain('name="accounts"');
    const foreign = decide(sut, scaRedirect, {
      session: sessionTokenOf(again),
      decision: 'approve',
      accounts: IBAN.bobHufLow,
    });
    expect(foreign.status).toBe(400);
    expect(consentStatus(sut, id)).toBe('received');
  });

  it("does not let the PSU approve a consent naming someone else's account", () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut, {
      access: { accounts: [{ iban: IBAN.bobHufLow }] },
    });
    const review = login(sut, scaRedirect);
    expect(review.status).toBe(403);
    expect(review.body).toContain(`not yours at this bank: ${IBAN.bobHufLow}`);
    expect(review.body).not.toContain('value="approve"');
    expect(
      decide(sut, scaRedirect, { session: sessionTokenOf(review), decision: 'approve' }).status,
    ).toBe(403);
    expect(consentStatus(sut, id)).toBe('received');
  });

  it('is single-use: after the decision every page of the authorisation answers 410', () => {
    const { sut } = newBank();
    const { scaRedirect } = newAisConsent(sut);
    const review = login(sut, scaRedirect);
    const token = sessionTokenOf(review);
    expect(decide(sut, scaRedirect, { session: token, decision: 'approve' }).status).toBe(303);
    expect(openSca(sut, scaRedirect).status).toBe(410);
    expect(login(sut, scaRedirect).status).toBe(410);
    const replay = decide(sut, scaRedirect, { session: token, decision: 'deny' });
    expect(replay.status).toBe(410);
    expect(replay.body).toContain('already been completed');
  });

  it('refuses a session token of another authorisation', () => {
    const { sut } = newBank();
    const first = newAisConsent(sut);
    const second = newAisConsent(sut);
    const token = sessionTokenOf(login(sut, first.scaRedirect));
    expect(decide(sut, second.scaRedirect, { session: token, decision: 'approve' }).status).toBe(
      403,
    );
    expect(
      decide(sut, second.scaRedirect, { session: 'made-up', decision: 'approve' }).status,
    ).toBe(403);
    expect(consentStatus(sut, second.id)).toBe('received');
  });

  it('cancels from the login page: rejected and back to the nok URI', () => {
    const { sut } = newBank();
    const { id, scaRedirect } = newAisConsent(sut);
    const answer = sut.handleSca({
      method: 'POST',
      path: `${scaPath(scaRedirect)}/cancel`,
      query: {},
      form: {},
    });
    expect(answer.status).toBe(303);
    expect(answer.headers?.Location).toBe(NOK_REDIRECT_URI);
    expect(consentStatus(sut, id)).toBe('rejected');
  });

  it('escapes what the TPP sent: a creditorName with <script> appears as text', () => {
    const { sut } = newBank();
    const { scaRedirect } = newPayment(
      sut,
      'domestic-credit-transfers',
      domesticPayment({ creditorName: '<script>alert("x")</script> & Co' }),
    );
    const pages = [openSca(sut, scaRedirect), login(sut, scaRedirect)];
    for (const page of pages) {
      expect(page.body).not.toMatch(/<script/i);
      expect(page.body).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co');
    }
  });

  it('answers unknown authorisations, brands and paths with 404 and wrong methods with 405', () => {
    const { sut } = newBank();
    const { scaRedirect } = newAisConsent(sut);
    const path = scaPath(scaRedirect);
    const get = (target: string) =>
      sut.handleSca({ method: 'GET', path: target, query: {}, form: {} });
    expect(get('/sca/danube-bank/authorisations/00000000-0000-0000-0000-000000000000').status).toBe(
      404,
    );
    expect(get(path.replace('danube-bank', 'vistula-bank')).status).toBe(404);
    expect(get('/elsewhere').status).toBe(404);
    expect(get(`${path}/login`).status).toBe(405);
    expect(get('/sca/danube-bank').status).toBe(200);
  });

  it('works under an SCA base URL with a path prefix', () => {
    const sut = new SandboxBank({
      scaBaseUrl: 'https://bank.example.test/sandbox/',
      now: () => new Date('2025-03-15T10:00:00Z'),
      productRules: PRODUCT_RULES,
    });
    const { id, scaRedirect } = newAisConsent(sut);
    expect(scaRedirect).toMatch(
      /^https:\/\/bank\.example\.test\/sandbox\/sca\/danube-bank\/authorisations\//,
    );
    expect(openSca(sut, scaRedirect).body).toContain(`action="${scaRedirect}/login"`);
    expect(authorise(sut, scaRedirect).headers?.Location).toBe(REDIRECT_URI);
    expect(consentStatus(sut, id)).toBe('valid');
  });
});
