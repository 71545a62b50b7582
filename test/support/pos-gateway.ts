import { setTimeout as sleep } from 'node:timers/promises';
import type { TerminalFixture } from '#src/sandbox/pos/pos-terminals.js';
import { bearer, type TestGateway } from './test-gateway.js';

/** A tenant of a test gateway with its app key and its sandbox merchant (card and POS keys). */
export interface PosTenant {
  tenantId: string;
  key: string;
  merchantId: string;
}

export async function posTenant(gateway: TestGateway): Promise<PosTenant> {
  const { tenantId, key } = await gateway.newTenantWithKey('app');
  const [row] = (await gateway.dataSource.query(
    'SELECT merchant_id FROM card_credentials WHERE tenant_id = $1',
    [tenantId],
  )) as { merchant_id: string }[];
  return { tenantId, key, merchantId: row.merchant_id };
}

/** Terminals of the tenant's sandbox merchant, from a fixture. */
export function terminals(
  gateway: TestGateway,
  tenant: PosTenant,
  fixture: TerminalFixture & { count?: number } = {},
): { token: string; tid: string; cash_registry_secret?: string }[] {
  const made = gateway.sandbox.pos.addTerminals(tenant.merchantId, fixture as never);
  if (typeof made === 'string') throw new Error(made);
  return made as never;
}

export const posCall = (
  gateway: TestGateway,
  tenant: PosTenant,
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
) =>
  gateway.app.inject({ method, url, headers: bearer(tenant.key), ...(payload ? { payload } : {}) });

/** Waits until the sandbox terminal shows a payment. */
export async function shown(gateway: TestGateway, token: string): Promise<string> {
  for (;;) {
    const current = gateway.sandbox.pos.terminal(token)?.current;
    if (current) return current;
    await sleep(5);
  }
}
