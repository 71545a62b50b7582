import { Injectable } from '@nestjs/common';
import { LazyModuleLoader, ModuleRef } from '@nestjs/core';
import { bankDoesNotKnow, CONSENTS } from '../open-banking/consents/consents.service.js';
import { FINAL_CONSENT_STATUSES, type Consent } from '../open-banking/consents/consent.entity.js';
import { canonicalPaymentProduct } from '../open-banking/payments/dto/payment.dto.js';
import type { Payment } from '../open-banking/payments/payment.entity.js';
import { PAYMENTS } from '../open-banking/payments/payments.service.js';
import { ProviderLedger } from '../provider-ledger/provider-ledger.service.js';
import type { UpstreamAnswer } from '../upstreams/http/upstream-caller.js';
import { requestIdHeader } from '../upstreams/http/upstream-transport.js';
import { OpenBankingClient } from '../upstreams/open-banking/open-banking.client.js';
import type { ByIdKind, ByIdRow, ByIdValues } from './by-id-reconciler.js';
import type { RunContext } from './run-context.js';

/**
 * Whether the provider's status is further along than Portico's: a status Portico's is not final in
 * and the provider's is final in, or one of a higher rank on the way there.
 */
const aheadOf =
  (rank: Readonly<Record<string, number>>, final: readonly string[]) =>
  (portico: string, provider: string) =>
    !final.includes(portico) &&
    (final.includes(provider) || (rank[provider] ?? -1) > (rank[portico] ?? Infinity));

/** Berlin Group's consent statuses on the way to `valid`; the others are final. */
const CONSENT_RANK = { received: 0, partiallyAuthorised: 1, valid: 2 };
const CONSENT_FINAL: readonly string[] = FINAL_CONSENT_STATUSES;

/** Berlin Group's transaction statuses on the way to the creditor's account; the others are final. */
const PAYMENT_RANK = { RCVD: 0, PDNG: 1, PATC: 1, ACTC: 2, ACCP: 3, ACFC: 3, ACWC: 4, ACSP: 4 };
const PAYMENT_FINAL = ['ACSC', 'ACCC', 'ACWP', 'RJCT', 'CANC', 'failed'];

const IN_DOUBT = ['creating', 'unknown'];

/** Not found at the bank: Berlin Group's RESOURCE_UNKNOWN (403 or 404), CONSENT_UNKNOWN. */
const unknownAtBank = (answer: UpstreamAnswer<unknown>) =>
  bankDoesNotKnow(answer) ||
  ((answer.status === 403 || answer.status === 404) &&
    ['RESOURCE_UNKNOWN', 'CONSENT_UNKNOWN', undefined].includes(answer.messages[0]?.code));

const amountOf = (payment: { instructedAmount?: { amount?: unknown; currency?: unknown } }) => ({
  amount:
    typeof payment.instructedAmount?.amount === 'string' ? payment.instructedAmount.amount : null,
  currency:
    typeof payment.instructedAmount?.currency === 'string'
      ? payment.instructedAmount.currency
      : null,
});

/**
 * Open banking's consents and payments as reconciliation reads them (capability `open-banking`): by the
 * bank's id, with the tenant's own TPP identity, each call in the access log like any other.
 */
@Injectable()
export class OpenBankingKinds {
  private client?: Promise<OpenBankingClient>;

  constructor(
    private readonly modules: ModuleRef,
    private readonly lazyModules: LazyModuleLoader,
    private readonly ledger: ProviderLedger,
  ) {}

  /** The bank's client, found (or loaded) when the first open-banking run needs it. */
  private bank(): Promise<OpenBankingClient> {
    this.client ??= this.findBank().catch((error: unknown) => {
      this.client = undefined; // the next run tries again (the bank's address or QWAC fixed)
      throw error;
    });
    return this.client;
  }

  /**
   * The gateway's, which loads the open-banking upstream; otherwise (the CLI, whose other commands have
   * no use for the bank's mTLS transport and QWAC) its module loaded now, with this process's configuration.
   */
  private async findBank(): Promise<OpenBankingClient> {
    try {
      return this.modules.get(OpenBankingClient, { strict: false });
    } catch {
      // not loaded in this process
    }
    const { OpenBankingUpstreamModule } =
      await import('../upstreams/open-banking/open-banking-upstream.module.js');
    const upstream = await this.lazyModules.load(() => OpenBankingUpstreamModule);
    return upstream.get(OpenBankingClient);
  }

  /** Reads at the bank through the run (its rate, its deadline), written ahead in the access log. */
  private async read<T>(
    context: RunContext,
    subject: { tenantId: string; consentId?: string; paymentId?: string },
    operation: string,
    send: (bank: OpenBankingClient) => Promise<UpstreamAnswer<T>>,
  ): Promise<T | undefined> {
    const bank = await this.bank();
    const answer = await context.call(() =>
      this.ledger.call({ ...subject, operation, psuPresent: false }, () => send(bank)),
    );
    if (unknownAtBank(answer)) return undefined;
    if (answer.status >= 400 || !answer.data) throw bank.refusal(operation, answer);
    return answer.data;
  }

  readonly consent: ByIdKind<Consent> = {
    kind: 'consent',
    table: CONSENTS,
    made: (query) => query.andWhere('r.upstream_consent_id IS NOT NULL'),
    final: CONSENT_FINAL,
    inDoubt: IN_DOUBT,
    values: (consent) => ({ status: consent.status, token: consent.upstreamConsentId }),
    fixed: [],
    read: async (context, consent) => {
      const path = { brandId: consent.brandId, consentId: consent.upstreamConsentId! };
      const params = { params: { path, header: requestIdHeader() } };
      const subject = { tenantId: consent.tenantId, consentId: consent.id };
      const data =
        consent.kind === 'ais'
          ? await this.read(context, subject, 'getConsentStatus', (bank) =>
              bank.call('getConsentStatus', consent.brandId, (api) =>
                api.GET('/{brandId}/bg/v1/consents/{consentId}/status', params),
              ),
            )
          : await this.read(context, subject, 'getCofConsentStatus', (bank) =>
              bank.call('getCofConsentStatus', consent.brandId, (api) =>
                api.GET(
                  '/{brandId}/bg/v2/consents/confirmation-of-funds/{consentId}/status',
                  params,
                ),
              ),
            );
      return data && { status: data.consentStatus, token: consent.upstreamConsentId };
    },
    behind: aheadOf(CONSENT_RANK, CONSENT_FINAL),
    move: (consent, provider) =>
      this.ledger.transition(CONSENTS, consent, provider.status, 'reconciled'),
  };

  readonly payment: ByIdKind<Payment> = {
    kind: 'payment',
    table: PAYMENTS,
    made: (query) => query.andWhere('r.upstream_payment_id IS NOT NULL'),
    final: PAYMENT_FINAL,
    inDoubt: IN_DOUBT,
    values: (payment) => ({
      status: payment.status,
      token: payment.upstreamPaymentId,
      ...amountOf(payment.details),
    }),
    fixed: ['amount', 'currency'],
    read: async (context, payment): Promise<ByIdValues | undefined> => {
      const path = {
        brandId: payment.brandId,
        paymentProduct: canonicalPaymentProduct(payment.paymentProduct),
        paymentId: payment.upstreamPaymentId!,
      };
      const subject = { tenantId: payment.tenantId, paymentId: payment.id };
      const data = await this.read(context, subject, 'getPayment', (bank) =>
        bank.call('getPayment', payment.brandId, (api) =>
          api.GET('/{brandId}/bg/v1/payments/{paymentProduct}/{paymentId}', {
            params: { path, header: requestIdHeader() },
          }),
        ),
      );
      return (
        data && {
          status: data.transactionStatus,
          token: payment.upstreamPaymentId,
          ...amountOf(data.paymentDetails),
        }
      );
    },
    behind: aheadOf(PAYMENT_RANK, PAYMENT_FINAL),
    move: (payment, provider) =>
      this.ledger.transition(PAYMENTS, payment, provider.status, 'reconciled'),
  };

  readonly kinds: readonly ByIdKind<ByIdRow>[] = [
    this.consent as unknown as ByIdKind,
    this.payment as unknown as ByIdKind,
  ];
}
