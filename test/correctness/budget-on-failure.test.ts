import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvedConsent } from '../support/consent-flow.js';
import { porticoClient } from '../support/inject-fetch.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// The daily budget of unattended reads follows the bank's count: a read the bank did not serve is free.
describe('the daily budget when the bank fails', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ UPSTREAM_RETRY_DELAYS_MS: 'none' });
  });
  afterAll(() => gateway.close());

  it('gives the unit back when the bank answers 503, keeps it when the bank served the read', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const api = porticoClient(gateway, key);
    const read = () =>
      api.GET('/v1/accounts/{accountId}/balances', {
        params: { path: { accountId }, header: { 'Consent-ID': consentId } },
      });
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
});
