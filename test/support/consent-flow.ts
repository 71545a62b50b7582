import { completeSca } from './sca.js';
import { ALICE, consentRequest, facade } from './facade.js';
import type { TestGateway } from './test-gateway.js';

/**
 * A consent created through the facade and approved at the sandbox's SCA pages, then completed by following
 * the bank's redirect to Portico's callback (what the user's browser does), without a browser.
 */
export async function approvedConsent(
  gateway: TestGateway,
  key: string,
  overrides: Record<string, unknown> = {},
): Promise<{ consentId: string; accountId: string }> {
  const api = facade(gateway, key);
  const created = await api.post<{ consentId: string; _links: { scaRedirect: string } }>(
    '/v1/consents',
    consentRequest(overrides),
  );
  if (created.status !== 201)
    throw new Error(`consent creation answered ${created.status}: ${JSON.stringify(created.body)}`);
  const callback = await completeSca(created.body._links.scaRedirect, {
    ...ALICE,
    decision: 'approve',
  });
  const url = new URL(callback);
  const back = await gateway.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  if (back.statusCode !== 303)
    throw new Error(`callback answered ${back.statusCode}: ${back.body}`);
  const consent = await api.get<{ accounts: { resourceId: string }[] }>(
    `/v1/consents/${created.body.consentId}`,
  );
  return { consentId: created.body.consentId, accountId: consent.body.accounts[0]?.resourceId };
}
