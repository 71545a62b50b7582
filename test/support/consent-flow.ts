import type { components } from '#src/client/portico-client.js';
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

/**
 * The same for a gateway running as its own process: `call` sends a request to it with an app key, and the
 * browser's step back to Portico goes over the network too.
 */
export async function approvedConsentOverHttp(
  call: (path: string, init?: RequestInit) => Promise<Response>,
): Promise<{ consentId: string; accountId: string }> {
  const created = await call('/v1/consents', {
    method: 'POST',
    body: JSON.stringify(consentRequest()),
  });
  if (created.status !== 201)
    throw new Error(`consent creation answered ${created.status}: ${await created.text()}`);
  const consent = (await created.json()) as { consentId: string; _links: { scaRedirect: string } };
  const callback = await completeSca(consent._links.scaRedirect, { ...ALICE, decision: 'approve' });
  const back = await fetch(callback, { redirect: 'manual' });
  if (back.status !== 303) throw new Error(`callback answered ${back.status}`);
  const stored = (await (await call(`/v1/consents/${consent.consentId}`)).json()) as {
    status: string;
    accounts: { resourceId: string }[];
  };
  if (stored.status !== 'valid') throw new Error(`consent is ${stored.status}, not valid`);
  return { consentId: consent.consentId, accountId: stored.accounts[0].resourceId };
}
