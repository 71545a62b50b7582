import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { notFound } from '#src/provider-ledger/resource-store.js';
import { isUuid } from '#src/shared/uuid.js';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { settleLostCreation } from '../store/lost-creation.js';
import { customerMatches, sentCustomerFingerprint } from './customer-match.js';

export type ProviderCustomer = components['schemas']['Customer'];

const statusOf = (customer: { is_active?: boolean }) =>
  customer.is_active === false ? 'deleted' : 'active';

/**
 * Stored customers, their cards and mandates: a Portico row per customer (tenant, provider id, status
 * `active` / `deleted`, every change in its history), its cards and mandates reached through it.
 */
@Injectable()
export class CardCustomersService {
  constructor(private readonly store: CardStore) {}

  async create(tenantId: string, form: CardForm<'CreateCustomerForm'>): Promise<ProviderCustomer> {
    const row = await this.store.begin(
      tenantId,
      'customer',
      { parentToken: sentCustomerFingerprint(form) },
      { operation: 'createCustomer', resource: (customerId) => `/v1/card/customers/${customerId}` },
    );
    return this.store.create(row, {
      names: () => ({ customerId: row.id }),
      send: () => this.store.call(tenantId, 'createCustomer', { form }, row),
      settle: (customer) =>
        this.store.settle(row, customer, statusOf(customer), 'upstream-created'),
    });
  }

  /**
   * Settles a customer whose creation answer was lost (the resolver): found among the provider's by
   * what Portico sent, it takes the provider's status; certainly absent, it failed (not made).
   */
  settleInDoubt(row: CardRow<'customer'>, callMs: number): Promise<void> {
    return settleLostCreation(this.store, row, callMs, {
      list: (query) => this.store.call(row.tenantId, 'listCustomers', { query }, row),
      matches: customerMatches,
      statusOf,
    });
  }

  async get(tenantId: string, id: string): Promise<ProviderCustomer> {
    if (isUuid(id)) {
      const row = await this.store.byId(tenantId, 'customer', id);
      if (!row.token) throw this.store.notKnownYet('customer', row);
      id = row.token;
    }
    const row = await this.store.owned(tenantId, 'customer', id);
    const customer = await this.store.call(
      tenantId,
      'retrieveCustomer',
      { path: { customerId: id } },
      row,
    );
    if (!row) await this.store.adopt(tenantId, 'customer', customer, statusOf(customer));
    return customer;
  }

  list(tenantId: string, query: CardQueryOf<'listCustomers'>) {
    return this.store.call(tenantId, 'listCustomers', { query });
  }

  async update(tenantId: string, token: string, form: CardForm<'UpdateCustomerForm'>) {
    const row = await this.rowOf(tenantId, token);
    const customer = await this.store.call(
      tenantId,
      'updateCustomer',
      { path: { customerId: token }, form },
      row,
    );
    await this.store.changed(row, customer, 'updated');
    return customer;
  }

  async remove(tenantId: string, token: string) {
    const row = await this.rowOf(tenantId, token);
    const customer = await this.store.call(
      tenantId,
      'deleteCustomer',
      { path: { customerId: token } },
      row,
    );
    await this.store.settle(row, { ...row.data, ...customer }, 'deleted', 'deleted-by-app');
    return customer;
  }

  async addCard(tenantId: string, token: string, form: CardForm<'CreateCustomerCardForm'>) {
    const row = await this.rowOf(tenantId, token);
    const card = await this.store.call(
      tenantId,
      'createCustomerCard',
      { path: { customerId: token }, form },
      row,
    );
    await this.store.note(row, `card-added:${card.token}`);
    return card;
  }

  async cards(tenantId: string, token: string, query: CardQueryOf<'listCustomerCards'>) {
    const row = await this.rowOf(tenantId, token);
    return this.store.call(
      tenantId,
      'listCustomerCards',
      { path: { customerId: token }, query },
      row,
    );
  }

  async card(tenantId: string, token: string, cardId: string) {
    const row = await this.rowOf(tenantId, token);
    return this.store.call(
      tenantId,
      'retrieveCustomerCard',
      { path: { customerId: token, cardId } },
      row,
    );
  }

  async removeCard(tenantId: string, token: string, cardId: string) {
    const row = await this.rowOf(tenantId, token);
    const deleted = await this.store.call(
      tenantId,
      'deleteCustomerCard',
      { path: { customerId: token, cardId } },
      row,
    );
    await this.store.note(row, `card-deleted:${cardId}`);
    return deleted;
  }

  async mandates(tenantId: string, token: string, query: CardQueryOf<'listCustomerMandates'>) {
    const row = await this.rowOf(tenantId, token);
    return this.store.call(
      tenantId,
      'listCustomerMandates',
      { path: { customerId: token }, query },
      row,
    );
  }

  async revokeMandate(tenantId: string, token: string, mandateId: string) {
    const row = await this.rowOf(tenantId, token);
    const mandate = await this.store.call(
      tenantId,
      'deleteMandate',
      { path: { customerId: token, mandateId } },
      row,
    );
    await this.store.note(row, `mandate-revoked:${mandateId}`);
    return mandate;
  }

  /** The tenant's customer row (adopted when the provider knows it for this merchant only). */
  private async rowOf(tenantId: string, token: string): Promise<CardRow<'customer'>> {
    const row = await this.store.owned(tenantId, 'customer', token);
    if (row) return row;
    await this.get(tenantId, token);
    const adopted = await this.store.owned(tenantId, 'customer', token);
    if (!adopted) throw notFound('customer', token);
    return adopted;
  }
}
