import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { bindIdempotentResource } from '#src/platform/idempotency/idempotency-binding.js';
import { inDoubtProblem, outcomeUnknown } from '#src/upstreams/http/upstream-caller.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';

export type DomainList = components['schemas']['DeviceWalletDomainList'];

/** What a domain's row keeps: the provider's item (its name as `token` too), and why it was deleted. */
export type WalletDomainData = Partial<components['schemas']['DeviceWalletDomain']> & {
  domain_name: string;
  token?: string;
  deletion_reason?: string;
};

type DomainRow = CardRow<'wallet_domain'>;

const RESOURCE = '/v1/card/wallets/domains';

const namesOf = (form: { domain_names: string[] }) => [
  ...new Set(form.domain_names.map((name) => name.toLowerCase())),
];

/**
 * The tenant's device-wallet domains: a row per domain (`token` the name in lower case) with its
 * `registered` → `deleted` history (the reason kept with it), every call written ahead in the access
 * log. The provider's list is the truth: reading it settles a row left in doubt.
 */
@Injectable()
export class CardWalletDomainsService {
  constructor(private readonly store: CardStore) {}

  async register(tenantId: string, form: CardForm<'DeviceWalletDomainsForm'>): Promise<DomainList> {
    const names = namesOf(form);
    const rows = await this.rowsOf(tenantId);
    const fresh: DomainRow[] = [];
    // A domain deleted earlier keeps its row (and history): only a name never held gets a new one.
    for (const name of names)
      if (!rows.some((row) => row.token === name))
        fresh.push(
          await this.store.begin(tenantId, 'wallet_domain', { data: { domain_name: name } }),
        );
    await bindIdempotentResource(RESOURCE);
    const list = await this.call(tenantId, fresh, () =>
      this.store.call(
        tenantId,
        'registerDeviceWalletDomains',
        { form: { domain_names: names } },
        fresh[0],
      ),
    );
    await this.reconcile(tenantId, list, 'upstream-registered');
    return list;
  }

  async delete(
    tenantId: string,
    form: CardForm<'DeviceWalletDomainsDeletionForm'>,
  ): Promise<DomainList> {
    const names = namesOf(form);
    const rows = (await this.rowsOf(tenantId)).filter(
      (row) => row.status === 'registered' && names.includes(row.token ?? ''),
    );
    await bindIdempotentResource(`${RESOURCE}/deletions`);
    const list = await this.call(tenantId, [], () =>
      this.store.call(
        tenantId,
        'deleteDeviceWalletDomains',
        { form: { domain_names: names, reason: form.reason } },
        rows[0],
      ),
    );
    for (const row of rows)
      await this.store.settle(
        row,
        { domain_name: row.token ?? '', ...row.data, deletion_reason: form.reason },
        'deleted',
        'deleted-by-app',
      );
    await this.reconcile(tenantId, list, 'upstream-status');
    return list;
  }

  async list(tenantId: string): Promise<DomainList> {
    const list = await this.store.call(tenantId, 'listDeviceWalletDomains', {});
    await this.reconcile(tenantId, list, 'upstream-status');
    return list;
  }

  /** A write whose answer was lost leaves its new rows `unknown`; the next list settles them. */
  private async call(
    tenantId: string,
    fresh: DomainRow[],
    write: () => Promise<DomainList>,
  ): Promise<DomainList> {
    try {
      return await write();
    } catch (error) {
      const unknown = outcomeUnknown(error);
      for (const row of fresh)
        await this.store.transition(
          row,
          unknown ? 'unknown' : 'failed',
          unknown ? 'upstream-outcome-unknown' : 'upstream-refused',
        );
      if (!unknown || !(error instanceof ProblemException)) throw error;
      throw inDoubtProblem(error, { resource: RESOURCE });
    }
  }

  /** Brings the tenant's rows in line with the provider's list of registered domains. */
  private async reconcile(tenantId: string, list: DomainList, cause: string): Promise<void> {
    const listed = new Map(list.items.map((item) => [item.domain_name, item]));
    const rows = await this.rowsOf(tenantId);
    const held = new Set(rows.filter((row) => row.token).map((row) => row.token as string));
    for (const row of rows) {
      const name = row.token ?? row.data?.domain_name ?? '';
      const item = listed.get(name);
      if (row.status === 'registered' && !item)
        await this.store.transition(row, 'deleted', 'not-at-provider');
      else if (item && row.status !== 'registered' && (row.token === name || !held.has(name))) {
        await this.store.settle(row, { ...item, token: name }, 'registered', cause);
        held.add(name);
      } else if (row.status === 'creating' || row.status === 'unknown')
        await this.store.transition(row, 'failed', 'not-at-provider');
    }
    for (const [name, item] of listed)
      if (!held.has(name))
        await this.store.adopt(tenantId, 'wallet_domain', { ...item, token: name }, 'registered');
  }

  private async rowsOf(tenantId: string): Promise<DomainRow[]> {
    return this.store.ofKind(tenantId, 'wallet_domain');
  }
}
