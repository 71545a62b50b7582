import { Injectable } from '@nestjs/common';
import type { components } from '../../generated/card.js';
import type { JsonObject } from '../../platform/common/json.js';
import type { ProblemException } from '../../platform/errors/problem.js';
import { bindIdempotentResource } from '../../platform/idempotency/idempotency-binding.js';
import { isUuid } from '../../shared/uuid.js';
import { inDoubtProblem, outcomeUnknown } from '../../upstreams/http/upstream-caller.js';
import type { CardResource } from '../store/card-resource.entity.js';
import { CardStore, notFound } from '../store/card-store.service.js';

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

  async create(tenantId: string, form: Record<string, unknown>): Promise<ProviderCustomer> {
    const row = await this.store.begin(tenantId, 'customer');
    await bindIdempotentResource(`/v1/card/customers/${row.id}`);
    let customer: ProviderCustomer;
    try {
      customer = await this.store.call(tenantId, 'createCustomer', { form }, row);
    } catch (error) {
      // The provider offers no handle to find a customer whose answer was lost: it stays in doubt.
      const unknown = outcomeUnknown(error);
      await this.store.transition(
        row,
        unknown ? 'unknown' : 'failed',
        unknown ? 'upstream-outcome-unknown' : 'upstream-refused',
      );
      if (unknown)
        throw inDoubtProblem(error as ProblemException, {
          customerId: row.id,
          resource: `/v1/card/customers/${row.id}`,
        });
      throw error;
    }
    await this.store.settle(
      row,
      customer as unknown as JsonObject,
      statusOf(customer),
      'upstream-created',
    );
    return customer;
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
    if (!row)
      await this.store.adopt(
        tenantId,
        'customer',
        customer as unknown as JsonObject,
        statusOf(customer),
      );
    return customer;
  }

  list(tenantId: string, query: Record<string, string | number | undefined>) {
    return this.store.call(tenantId, 'listCustomers', { query });
  }

  async update(tenantId: string, token: string, form: Record<string, unknown>) {
    const row = await this.rowOf(tenantId, token);
    const customer = await this.store.call(
      tenantId,
      'updateCustomer',
      { path: { customerId: token }, form },
      row,
    );
    await this.store.changed(row, customer as unknown as JsonObject, 'updated');
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
    await this.store.settle(
      row,
      { ...(row.data ?? {}), ...(customer as unknown as JsonObject) },
      'deleted',
      'deleted-by-app',
    );
    return customer;
  }

  async addCard(tenantId: string, token: string, form: Record<string, unknown>) {
    const row = await this.rowOf(tenantId, token);
    const card = await this.store.call(
      tenantId,
      'createCustomerCard',
      { path: { customerId: token }, form },
      row,
    );
    await this.store.changed(row, row.data ?? {}, `card-added:${card.token}`);
    return card;
  }

  async cards(tenantId: string, token: string, query: Record<string, string | number | undefined>) {
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
    await this.store.changed(row, row.data ?? {}, `card-deleted:${cardId}`);
    return deleted;
  }

  async mandates(
    tenantId: string,
    token: string,
    query: Record<string, string | number | undefined>,
  ) {
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
    await this.store.changed(row, row.data ?? {}, `mandate-revoked:${mandateId}`);
    return mandate;
  }

  /** The tenant's customer row (adopted when the provider knows it for this merchant only). */
  private async rowOf(tenantId: string, token: string): Promise<CardResource> {
    const row = await this.store.owned(tenantId, 'customer', token);
    if (row) return row;
    await this.get(tenantId, token);
    const adopted = await this.store.owned(tenantId, 'customer', token);
    if (!adopted) throw notFound('customer', token);
    return adopted;
  }
}
