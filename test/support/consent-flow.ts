import type { components } from '../../src/client/portico-client.js';
import { completeSca } from './sca.js';
import { ALICE, consentRequest } from './fixtures.js';
import { porticoClient } from './inject-fetch.js';
import type { TestGateway } from './test-gateway.js';

/**
 * A consent created through the facade and approved at the sandbox's SCA pages, then completed by following
 * the bank's redirect to Portico's callback (what the user's browser does), without a browser.
 */
export async function approvedConsent(
  gateway: TestGateway,
  key: string,
  overrides: Partial<components['schemas']['CreateConsentRequest']> = {},
): Promise<{ consentId: string; accountId: string }> {
  const api = porticoClient(gateway, key);
  const created = await api.POST('/v1/consents', { body: consentRequest(overrides) });
  if (!created.data)
    throw new Error(
      `consent creation answered ${created.response.status}: ${JSON.stringify(created.error)}`,
    );
  const { consentId } = created.data;
  const callback = await completeSca(created.data._links.scaRedirect!, {
    ...ALICE,
    decision: 'approve',
  });
  const url = new URL(callback);
  const back = await gateway.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  if (back.statusCode !== 303)
    throw new Error(`callback answered ${back.statusCode}: ${back.body}`);
  const consent = await api.GET('/v1/consents/{consentId}', { params: { path: { consentId } } });
  return { consentId, accountId: consent.data!.accounts[0]?.resourceId };
}
