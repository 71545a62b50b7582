import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { porticoClient } from '../support/inject-fetch.js';
import { sendOperation } from '../support/sandbox-api.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

// The daily budget of unattended reads follows the bank's count: a read the bank did not serve is free.
describe('the daily budget when the bank fails', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ UPSTREAM_RETRY_DELAYS_MS: 'none' });
  });
  afterAll(() => gateway.close());

  /** A new tenant's approved consent, and its unattended balances read through Portico. */
  const unattendedReader = async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const api = porticoClient(gateway, key);
    const read = () =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: { path: { accountId }, header: { 'Consent-ID': consentId } },
      });
    return { consentId, accountId, read };
  };

  it('gives the unit back when the bank answers 503, keeps it when the bank served the read', async () => {
    const { read } = await unattendedReader();
    const served = await read();
    expect(served.response.status).toBe(200);
    const remaining = Number(served.response.headers.get('x-access-budget-remaining'));

    gateway.sandbox.chaos.add({
      operation: 'getBalances',
      fault: 'status',
      status: 503,
      emptyBody: true,
      times: 1,
    });
    const failed = await read();
    expect(failed.response.status).toBe(502);

    const next = await read();
    expect(next.response.status).toBe(200);
    expect(Number(next.response.headers.get('x-access-budget-remaining'))).toBe(remaining - 1);
  });

  it('uses the day up when the bank says its unattended reads are used up, and stops asking it', async () => {
    const { consentId, accountId, read } = await unattendedReader();
    // The bank's count runs ahead of Portico's: the consent's reads were made straight at the bank.
    const [{ upstream_consent_id: upstreamConsentId }] = await gateway.dataSource.query(
      'SELECT upstream_consent_id FROM consents WHERE id = $1',
      [consentId],
    );
    const tpp = transportTo(gateway.sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    const atBank = () =>
      sendOperation(tpp, 'getBalances', {
        params: { brandId: 'danube-bank', accountId },
        headers: { 'consent-id': upstreamConsentId },
      });
    for (let served = 0; ; served++) {
      const answer = await atBank();
      if (answer.status === 429) break;
      expect(answer.status).toBe(200);
      expect(served).toBeLessThan(10);
    }
    await tpp.close();
    const bankReads = () => gateway.sandbox.bank.control.calls().getBalances ?? 0;

    const before = bankReads();
    const passedOn = await read();
    expect(passedOn.response.status).toBe(429);
    expect(passedOn.error).toMatchObject({ upstream: { status: 429, code: 'ACCESS_EXCEEDED' } });
    expect(Number(passedOn.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(bankReads()).toBe(before + 1);

    const refusedHere = await read();
    expect(refusedHere.response.status).toBe(429);
    expect(refusedHere.error).toMatchObject({
      type: 'urn:portico:problem:consent:access-exceeded',
    });
    expect(refusedHere.response.headers.get('x-access-budget-remaining')).toBe('0');
    expect(bankReads()).toBe(before + 1);
  });

  it('gives the unit back when the bank throttles (ACCESS_EXCEEDED without a day-long Retry-After)', async () => {
    const { read } = await unattendedReader();
    gateway.sandbox.chaos.add({ operation: 'getBalances', fault: 'status', status: 429, times: 1 });
    const throttled = await read();
    expect(throttled.response.status).toBe(429);
    expect(throttled.error).toMatchObject({ upstream: { code: 'ACCESS_EXCEEDED' } });

    const served = await read();
    expect(served.response.status).toBe(200);
    expect(served.response.headers.get('x-access-budget-remaining')).toBe(
      String(Number(served.response.headers.get('x-access-budget-limit')) - 1),
    );
  });
});
