import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { components } from '#src/generated/card.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { toRfc3339Utc } from '#src/platform/common/rfc3339.js';
import { PAYMENT_READ_OWED_AFTER_MS } from './payment-read-owed.js';
import { requestContext } from '#src/platform/logging/request-context.js';
import { notMadeProblem } from '#src/provider-ledger/provider-ledger.service.js';
import { notFound } from '#src/provider-ledger/resource-store.js';
import { isUuid } from '#src/shared/uuid.js';
import type { CardQueryOf } from '#src/upstreams/card/card.client.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { walletChargeRefusal, walletData } from '../wallets/wallet-tokenization.js';

export type ProviderPayment = components['schemas']['Payment'];

/** The longest the lookup of a payment whose answer was lost may take inside the app's request. */
const INLINE_LOOKUP_MS = 5000;

/**
 * Card payments, exactly once: a payment always carries a merchant_ref (the app's, or `portico-<id>`),
 * stored with the payment's row before the provider is called and bound to the Idempotency-Key. When the
 * provider's answer is lost (timeout, broken connection, crash), the payment is looked up by that
 * reference, at once and then by the resolver, so that it is never charged twice and never left unknown.
 */
@Injectable()
export class CardPaymentsService {
  constructor(
    private readonly store: CardStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(tenantId: string, form: CardForm<'CreatePaymentForm'>): Promise<ProviderPayment> {
    // A wallet's card token pays only once Portico verified it (another tenant's is 404): checked here.
    const wallet =
      typeof form.token === 'string' && form.token.startsWith('ctn_')
        ? await this.store.owned(tenantId, 'wallet_token', form.token)
        : undefined;
    const refusal = wallet && walletChargeRefusal(wallet);
    if (refusal) throw refusal;
    // The payment's handle at the provider, stored before it is called: the app's, or one Portico makes.
    const id = randomUUID();
    const row = await this.store.begin(
      tenantId,
      'payment',
      {
        id,
        merchantRef: form.merchant_ref ?? `portico-${id}`,
        amount: form.amount,
        // A wallet's card token is the payment's source: however the payment settles, the wallet follows.
        parentToken: wallet?.token ?? null,
      },
      { operation: 'createPayment', resource: (paymentId) => `/v1/card/payments/${paymentId}` },
    );
    return this.store.create(row, {
      names: () => ({ paymentId: row.id, merchantRef: row.merchantRef ?? '' }),
      send: () =>
        this.store.call(
          tenantId,
          'createPayment',
          { form: { ...form, merchant_ref: row.merchantRef ?? undefined } },
          row,
        ),
      settle: async (made) => {
        await this.store.settle(row, made, made.status, 'upstream-created');
        await this.walletCharged(wallet, made.token, 'payment-created');
      },
      refusedCause: causeOf,
      // The provider's own handle settles it: the payment exists with this merchant_ref, or it does not.
      lookup: () => this.lookup(row, true).catch(() => undefined),
    });
  }

  /** A payment by the provider's id (`pmt_…`) or Portico's (a payment in doubt has only that). */
  async get(tenantId: string, id: string): Promise<ProviderPayment> {
    if (isUuid(id)) {
      const row = await this.store.byId(tenantId, 'payment', id);
      if (!row.token) {
        const found =
          row.status === 'failed' ? null : await this.lookup(row, false).catch(() => undefined);
        if (found) return found;
        throw outcomeNotKnown(row);
      }
      id = row.token;
    } else if (!(await this.store.owned(tenantId, 'payment', id))) {
      // Not one of the tenant's payments: maybe a child of one of its installment payments.
      const parent = await this.store.installmentParent(tenantId, id);
      if (parent?.token) return this.installment(tenantId, parent.token, id);
    }
    const [payment] = await this.withFailedRefunds(tenantId, [await this.read(tenantId, id)]);
    return payment;
  }

  /**
   * A child payment of an installment payment, which the provider answers only on its parent (read
   * afresh, so the child's status is the provider's now): as a payment of its own, with the parent's
   * description, card, payee and metadata, `parent_payment` and `due_date` (card.yaml retrievePayment).
   */
  private async installment(
    tenantId: string,
    parentToken: string,
    token: string,
  ): Promise<ProviderPayment> {
    const parent = await this.read(tenantId, parentToken);
    const child = parent.installments.find((part) => part.token === token);
    if (!child) throw notFound('payment', token);
    return {
      token,
      date_created: child.date_created ?? parent.date_created,
      description: parent.description,
      currency: child.currency ?? parent.currency,
      status: child.status ?? 'Pending installment',
      amount: child.amount,
      refund_amount: 0,
      fee_amount: child.fee_amount ?? 0,
      payee_email: parent.payee_email,
      payee_phone: parent.payee_phone,
      merchant_ref: null,
      card: parent.card,
      metadata: parent.metadata,
      refunded: false,
      refunds: [],
      installments_count: 0,
      installments: [],
      split: false,
      transfer_amount: 0,
      transfers: [],
      branch_token: parent.branch_token,
      parent_payment: parent.token,
      due_date: child.due_date,
    };
  }

  async list(tenantId: string, query: CardQueryOf<'listPayments'>) {
    const page = await this.store.call(tenantId, 'listPayments', { query });
    return { ...page, items: await this.withFailedRefunds(tenantId, page.items) };
  }

  /**
   * Payments with their failed refunds among `refunds` (oldest first, as the provider orders them): the
   * provider lists only the successful ones, so a refund that failed would be found nowhere on its payment.
   */
  private async withFailedRefunds(
    tenantId: string,
    payments: ProviderPayment[],
  ): Promise<ProviderPayment[]> {
    const failed = await this.store.failedRefunds(
      tenantId,
      payments.map((payment) => payment.token),
    );
    if (failed.length === 0) return payments;
    return payments.map((payment) => {
      const listed = new Set((payment.refunds ?? []).map((refund) => refund.token));
      const missing = failed.filter(
        (refund) => refund.payment === payment.token && !listed.has(refund.token),
      );
      if (missing.length === 0) return payment;
      const refunds = [...(payment.refunds ?? []), ...missing].sort((a, b) =>
        toRfc3339Utc(a.date_created).localeCompare(toRfc3339Utc(b.date_created)),
      );
      return { ...payment, refunds };
    });
  }

  async update(tenantId: string, token: string, form: CardForm<'UpdatePaymentForm'>) {
    const row = await this.rowOf(tenantId, token);
    const { metadata } = form;
    // An empty value unsets all metadata (seed): `{}` is empty too, but a form has no field for it.
    const emptied =
      typeof metadata === 'object' && metadata !== null && Object.keys(metadata).length === 0;
    const payment = await this.store.call(
      tenantId,
      'updatePayment',
      { path: { paymentId: token }, form: emptied ? { ...form, metadata: '' } : form },
      row,
    );
    await this.store.changed(row, payment, 'updated');
    return payment;
  }

  /** Captures a pre-authorised payment; bound to the Idempotency-Key first, so it never runs twice. */
  async capture(tenantId: string, token: string): Promise<ProviderPayment> {
    const row = await this.rowOf(tenantId, token);
    // Read again once the capture's outcome is known, should its answer not be recorded (database away).
    await this.store.oweRead(row, PAYMENT_READ_OWED_AFTER_MS);
    return this.store.write(row, {
      resource: `/v1/card/payments/${token}`,
      unknownCause: 'capture-outcome-unknown',
      names: () => ({ paymentId: token }),
      send: () => this.store.call(tenantId, 'capturePayment', { path: { paymentId: token } }, row),
      settle: (payment) => this.store.settle(row, payment, payment.status, 'captured'),
    });
  }

  /** Reads a payment from the provider and brings the tenant's row up to date (adopting one it lacks). */
  async read(tenantId: string, token: string, cause = 'upstream-status'): Promise<ProviderPayment> {
    const row = await this.store.owned(tenantId, 'payment', token);
    const payment = await this.store.call(
      tenantId,
      'retrievePayment',
      { path: { paymentId: token } },
      row,
    );
    if (!row)
      await this.store.adopt(tenantId, 'payment', payment, payment.status, {
        merchantRef: payment.merchant_ref ?? null,
      });
    else if (row.status !== payment.status)
      await this.store.settle(row, payment, payment.status, cause);
    return payment;
  }

  /** Settles one payment (or capture) in doubt: by reading it, or by its merchant_ref when it has no id. */
  settleInDoubt(row: CardRow<'payment'>): Promise<unknown> {
    return row.token
      ? this.read(row.tenantId, row.token, 'resolver')
      : this.lookup(row, false, 'resolver');
  }

  /**
   * Looks a payment without a provider id up by its merchant_ref: found, it is settled and answered;
   * certainly absent, the row fails (null); a failed lookup throws (still in doubt).
   */
  private async lookup(
    row: CardRow<'payment'>,
    inline: boolean,
    cause = 'found-by-merchant-ref',
  ): Promise<ProviderPayment | null> {
    if (inline) {
      // The lost call may have used the request's whole deadline: the lookup gets a short one of its own.
      const context = requestContext.getStore();
      if (context)
        context.upstreamDeadline =
          Date.now() + Math.min(INLINE_LOOKUP_MS, this.config.upstreams.card.http.deadlineMs);
    }
    const page = await this.store.call(
      row.tenantId,
      'listPayments',
      { query: { merchant_ref: row.merchantRef ?? undefined, count: 1 } },
      row,
    );
    const [payment] = page.items;
    if (!payment) {
      await this.store.transition(row, 'failed', `${inline ? '' : 'resolver:'}not-at-provider`);
      return null;
    }
    await this.store.settle(row, payment, payment.status, cause);
    // Found after its answer was lost: the wallet whose card token paid it is charged all the same.
    const wallet = row.parentToken?.startsWith('ctn_')
      ? await this.store.owned(row.tenantId, 'wallet_token', row.parentToken)
      : undefined;
    await this.walletCharged(
      wallet,
      payment.token,
      `${inline ? '' : 'resolver:'}payment-found-by-merchant-ref`,
    );
    return payment;
  }

  /** A verified wallet tokenisation whose card token paid `payment` is `charged` (once). */
  private async walletCharged(
    wallet: CardRow<'wallet_token'> | undefined,
    payment: string,
    cause: string,
  ): Promise<void> {
    if (wallet?.status === 'verified')
      await this.store.settle(wallet, walletData(wallet, { payment }), 'charged', cause);
  }

  private async rowOf(tenantId: string, token: string): Promise<CardRow<'payment'>> {
    const row = await this.store.owned(tenantId, 'payment', token);
    if (row) return row;
    // Not made through Portico (or before it kept rows): the provider says whether it is this merchant's.
    await this.read(tenantId, token);
    const adopted = await this.store.owned(tenantId, 'payment', token);
    if (!adopted) throw notFound('payment', token);
    return adopted;
  }
}

function causeOf(error: unknown): string {
  const upstream = (error as ProblemException).init?.extensions?.upstream as
    { code?: string; status?: number; failure?: string } | undefined;
  return upstream?.code
    ? `upstream-refused:${upstream.code}`
    : upstream?.failure
      ? `upstream-not-sent:${upstream.failure}`
      : 'upstream-failed';
}

function outcomeNotKnown(row: CardRow<'payment'>): ProblemException {
  const names = { paymentId: row.id, merchantRef: row.merchantRef };
  if (row.status === 'failed') return notMadeProblem('payment', row, names);
  return new ProblemException({
    status: 409,
    type: 'urn:portico:problem:outcome-unknown',
    title: 'Outcome unknown',
    detail: `The outcome of payment ${row.id} is not known yet; Portico settles it with the provider by its merchantRef ${row.merchantRef}`,
    headers: { 'Retry-After': '5' },
    extensions: { ...names, id: row.id, resourceStatus: row.status, outcome: 'unknown' },
  });
}
