import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { components } from '#src/generated/card.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import { ProviderResource } from '#src/provider-ledger/provider-resource.entity.js';
import {
  isUniqueViolation,
  ResourceStore,
  type BeginFields,
  type Resource,
  type WriteAhead,
} from '#src/provider-ledger/resource-store.js';
import type { UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import {
  CardClient,
  type CardAnswer,
  type CardKeyInBody,
  type CardOperation,
  type CardRequest,
  type OwnForm,
} from '#src/upstreams/card/card.client.js';
import type { IrisSessionData } from '../iris/card-iris.service.js';
import type { WalletDomainData } from '../wallets/card-wallet-domains.service.js';
import type { WalletTokenizationData } from '../wallets/wallet-tokenization.js';

type Schemas = components['schemas'];

/** The card side's kinds of ledger rows, and what each row's `data` holds (the provider's answer, snake_case). */
export type CardKinds = {
  payment: Schemas['Payment'];
  refund: Schemas['Refund'];
  customer: Schemas['Customer'] | Schemas['DeletedCustomer'];
  notification: Schemas['Notification'];
  iris_session: IrisSessionData;
  // the marketplace (src/card/marketplace)
  seller: Schemas['Seller'];
  transfer: Schemas['Transfer'];
  reversal: Schemas['Reversal'];
  payout: Schemas['Payout'];
  // wallets: a web-wallet tokenisation (`token` its ctn_), a device-wallet domain (`token` its name in lower case)
  wallet_token: WalletTokenizationData;
  wallet_domain: WalletDomainData;
};
export type CardKind = keyof CardKinds;
export type CardRow<K extends CardKind = CardKind> = Resource<CardKinds, K>;

/** The card call that creates a row, written ahead with it (ResourceStore.begin). */
export type CardWriteAhead = WriteAhead & { operation: CardOperation };

/** How a card call authenticates: the tenant's public key, or that key in a body field (the payment form). */
export interface CardCallOptions {
  publicKey?: boolean;
  keyInBody?: CardKeyInBody;
}

/**
 * The card side's rows in the provider-resource ledger (payments, refunds, customers, notifications,
 * IRIS sessions, the marketplace's, wallets'), and its calls to the card API through the ledger, so that
 * nothing reaches the provider unrecorded.
 */
@Injectable()
export class CardStore extends ResourceStore<CardKinds> {
  constructor(
    ledger: ProviderLedger,
    @InjectRepository(ProviderResource) rows: Repository<ProviderResource>,
    readonly client: CardClient,
  ) {
    super(ledger, rows);
  }

  /**
   * Verified wallet tokenisations whose card token paid a payment Portico holds as made (a fault
   * between the payment's settlement and its tokenisation's left them apart), with that payment's id;
   * all of them, or `walletId`'s only.
   */
  async walletsPaid(
    limit: number,
    walletId?: string,
  ): Promise<{ wallet: CardRow<'wallet_token'>; payment: string }[]> {
    const found = (await this.rows.query(
      `SELECT w.id, p.token AS payment FROM provider_resources w
         JOIN LATERAL (SELECT token FROM provider_resources p
                        WHERE p.tenant_id = w.tenant_id AND p.kind = 'payment' AND p.parent_token = w.token
                          AND p.status NOT IN ('creating', 'unknown', 'failed')
                        ORDER BY p.created_at LIMIT 1) p ON true
        WHERE w.kind = 'wallet_token' AND w.status = 'verified' ${walletId ? 'AND w.id = $2' : ''}
        LIMIT $1`,
      walletId ? [limit, walletId] : [limit],
    )) as { id: string; payment: string }[];
    const paid: { wallet: CardRow<'wallet_token'>; payment: string }[] = [];
    for (const { id, payment } of found) {
      const wallet = await this.rows.findOneBy({ id });
      if (wallet) paid.push({ wallet: this.typed<'wallet_token'>(wallet), payment });
    }
    return paid;
  }

  /** As ResourceStore.begin; a payment's merchant_ref already held by a live payment is 409. */
  override async begin<K extends CardKind>(
    tenantId: string,
    kind: K,
    fields: BeginFields<CardKinds, K> = {},
    writeAhead?: CardWriteAhead,
  ): Promise<CardRow<K>> {
    try {
      return await super.begin(tenantId, kind, fields, writeAhead);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new ProblemException({
        status: 409,
        type: PROBLEM_TYPES.conflict,
        title: 'Conflict',
        detail: `A payment with merchantRef "${fields.merchantRef}" exists (merchant references are unique)`,
        extensions: { code: '40025' },
      });
    }
  }

  /**
   * The refunds of these payments the provider recorded as Failed, as it answered them: the provider
   * lists only successful refunds in a payment's `refunds`, Portico keeps the failed ones it made.
   */
  async failedRefunds(tenantId: string, paymentTokens: string[]): Promise<Schemas['Refund'][]> {
    if (paymentTokens.length === 0) return [];
    const rows = await this.rows
      .createQueryBuilder('r')
      .where("r.tenant_id = :tenantId AND r.kind = 'refund' AND r.status = 'Failed'", {
        tenantId,
      })
      .andWhere('r.parent_token IN (:...paymentTokens)', { paymentTokens })
      .andWhere('r.data IS NOT NULL')
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .getMany();
    return rows.map((row) => this.typed<'refund'>(row).data!);
  }

  /**
   * The tenant's installment payment one of whose child payments has the provider's id `childToken`
   * (the provider answers a child only on its parent's `installments`), if Portico holds it.
   */
  async installmentParent(
    tenantId: string,
    childToken: string,
  ): Promise<CardRow<'payment'> | undefined> {
    const row = await this.rows
      .createQueryBuilder('r')
      .where("r.tenant_id = :tenantId AND r.kind = 'payment' AND r.token IS NOT NULL", { tenantId })
      .andWhere("r.data -> 'installments' @> CAST(:child AS jsonb)", {
        child: JSON.stringify([{ token: childToken }]),
      })
      .getOne();
    return row ? this.typed<'payment'>(row) : undefined;
  }

  /** The tenant's payment row holding a merchant_ref that is not failed (at most one: unique index). */
  async liveByMerchantRef(
    tenantId: string,
    merchantRef: string,
  ): Promise<CardRow<'payment'> | undefined> {
    const row = await this.rows
      .createQueryBuilder('r')
      .where("r.tenant_id = :tenantId AND r.kind = 'payment' AND r.merchant_ref = :merchantRef", {
        tenantId,
        merchantRef,
      })
      .andWhere("r.status <> 'failed'")
      .getOne();
    return row ? this.typed<'payment'>(row) : undefined;
  }

  /**
   * Calls the card API for a tenant through the ledger (written ahead in the access log, about `row`
   * when given); a refusal (4xx) becomes problem+json with the provider's status and code. Failures of
   * the seam (502/503/504) are rethrown for the caller to judge (in doubt or not).
   */
  async call<O extends CardOperation, R extends CardRequest<O>>(
    tenantId: string,
    operation: O,
    request: R & OwnForm<O, R>,
    row?: CardRow,
    options: CardCallOptions = {},
  ): Promise<CardAnswer<O>> {
    const answer = await this.send(tenantId, operation, request, row, options);
    if (answer.status >= 400)
      throw this.client.refusal(
        operation,
        answer,
        (request as { form?: Record<string, unknown> }).form,
      );
    // A success carries the operation's JSON (the seam checked it against card.yaml).
    return answer.data as CardAnswer<O>;
  }

  /** As `call`, answering a refusal rather than throwing it. */
  callRaw<O extends CardOperation, R extends CardRequest<O>>(
    tenantId: string,
    operation: O,
    request: R & OwnForm<O, R>,
    row?: CardRow,
    options: CardCallOptions = {},
  ): Promise<UpstreamAnswer<CardAnswer<O>>> {
    return this.send(tenantId, operation, request, row, options);
  }

  private send<O extends CardOperation>(
    tenantId: string,
    operation: O,
    request: CardRequest<O>,
    row: CardRow | undefined,
    options: CardCallOptions,
  ): Promise<UpstreamAnswer<CardAnswer<O>>> {
    return this.callAbout(tenantId, operation, row, () =>
      this.client.call(operation, tenantId, request, options),
    );
  }
}
