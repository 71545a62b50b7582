import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { signedResultRefused } from '../common/signed-result-refused.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { verifyIrisHash } from '#src/shared/iris/iris-hash.js';
import { outcomeUnknown } from '#src/upstreams/http/upstream-caller.js';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { callbackUrlOf, markCaptured, referenceDigest } from './card-iris.service.js';

export type IrisArrival = 'callback' | 'webhook';
export type IrisResultStatus = 'paid' | 'pending' | 'failed' | 'cancelled';

export interface IrisResult {
  session: CardRow<'iris_session'>;
  status: IrisResultStatus;
}

const REFERENCE = /^[A-Za-z0-9_-]{43}$/;
/** The provider's code of a source that already paid (card.yaml): never passed on to the app. */
const SOURCE_USED = '41001';
/** The failure code of a payer who cancelled at the bank (card.yaml IrisCallback). */
const PAYER_CANCELLED = 41002;

/**
 * The result of an IRIS session, from the provider's callback (through the payer's browser) or its
 * webhook, in any order and any number of times, on any replica. Portico checks the message's hash
 * with the tenant's secret key (constant time) and that it names this session, then makes the
 * payment from the source exactly once: the payment's row carries merchant_ref `iris-<src>`, unique
 * per tenant among payments that did not fail (a PostgreSQL unique index), and is inserted before the
 * provider is called, so whichever message arrives first makes the payment and the others find it.
 * The amount is the session's as Portico stored it, never the message's.
 */
@Injectable()
export class CardIrisResultsService {
  constructor(
    private readonly store: CardStore,
    private readonly credentials: CardCredentialsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async receive(
    reference: string,
    message: Record<string, unknown>,
    via: IrisArrival,
  ): Promise<IrisResult> {
    const session = REFERENCE.test(reference)
      ? await this.store.byParent('iris_session', referenceDigest(reference))
      : undefined;
    if (!session) {
      this.securityEvent('iris-unknown-session', via);
      throw new ProblemException({
        status: 404,
        type: PROBLEM_TYPES.notFound,
        title: 'Not Found',
        detail: 'No such IRIS session',
      });
    }
    const { secretKey } = await this.credentials.keysOf(session.tenantId);
    const signed = verifyIrisHash(secretKey, typeof message.hash === 'string' ? message.hash : '');
    if (!signed) {
      this.securityEvent('iris-hash-invalid', via, session);
      throw signedResultRefused('The hash is not the provider’s signature');
    }
    if (
      signed.callback_url !== callbackUrlOf(this.config, reference) ||
      (signed.token !== undefined && signed.token !== session.token)
    ) {
      this.securityEvent('iris-message-of-another-session', via, session);
      throw signedResultRefused('The signed result is not about this session');
    }
    if (signed.error_code !== undefined) return this.failed(session, signed, via);
    if (signed.token !== session.token) {
      this.securityEvent('iris-message-of-another-session', via, session);
      throw signedResultRefused('The signed result names no source');
    }
    return this.paid(session, via);
  }

  private async failed(
    session: CardRow<'iris_session'>,
    signed: Record<string, unknown>,
    via: IrisArrival,
  ): Promise<IrisResult> {
    const cancelled = signed.error_code === PAYER_CANCELLED;
    if (session.status !== 'captured')
      await this.store.transition(
        session,
        cancelled ? 'cancelled' : 'failed',
        `${via}:bank-${String(signed.error_code)}`,
      );
    return { session, status: cancelled ? 'cancelled' : 'failed' };
  }

  /** Makes the payment from the source once, whichever message arrives first. */
  private async paid(session: CardRow<'iris_session'>, via: IrisArrival): Promise<IrisResult> {
    if (session.status === 'captured') return { session, status: 'paid' };
    if (session.status !== 'authorized')
      await this.store.transition(session, 'authorized', `${via}:approved`);
    const merchantRef = `iris-${session.token}`;
    let payment: CardRow<'payment'>;
    try {
      payment = await this.store.begin(session.tenantId, 'payment', {
        merchantRef,
        amount: session.amount,
        parentToken: session.token,
      });
    } catch (error) {
      if ((error as ProblemException).init?.status !== 409) throw error;
      // Another message (here or on another replica) holds the payment: its row says how far it is.
      const existing = await this.store.liveByMerchantRef(session.tenantId, merchantRef);
      return { session, status: existing?.token ? 'paid' : 'pending' };
    }
    try {
      const made = await this.store.call(
        session.tenantId,
        'createPayment',
        {
          form: {
            token: session.token ?? undefined,
            amount: session.amount ?? undefined,
            merchant_ref: merchantRef,
          },
        },
        payment,
      );
      await this.store.settle(payment, made, made.status, `iris-${via}`);
      await this.captured(session, made.token, via);
      return { session, status: 'paid' };
    } catch (error) {
      if (outcomeUnknown(error)) {
        // In doubt, never failed: the resolver finds it by merchant_ref (or frees the reference).
        await this.store.transition(payment, 'unknown', 'upstream-outcome-unknown');
        return { session, status: 'pending' };
      }
      return this.refusedPayment(session, payment, error, via);
    }
  }

  /**
   * The provider refused the payment. 41001 means the source already paid: the payment is looked up by
   * its merchant_ref and adopted, never reported to the app as an error.
   */
  private async refusedPayment(
    session: CardRow<'iris_session'>,
    payment: CardRow<'payment'>,
    error: unknown,
    via: IrisArrival,
  ): Promise<IrisResult> {
    const upstream = (error as ProblemException).init?.extensions?.upstream as
      { code?: string } | undefined;
    if (upstream?.code === SOURCE_USED) {
      const page = await this.store.call(
        session.tenantId,
        'listPayments',
        { query: { merchant_ref: payment.merchantRef ?? undefined, count: 1 } },
        payment,
      );
      const [found] = page.items;
      if (found) {
        await this.store.settle(payment, found, found.status, 'found-by-merchant-ref');
        await this.captured(session, found.token, via);
        return { session, status: 'paid' };
      }
    }
    await this.store.transition(
      payment,
      'failed',
      `upstream-refused:${upstream?.code ?? 'unknown'}`,
    );
    this.logger.warn(
      { tenantId: session.tenantId, sessionId: session.id, code: upstream?.code },
      'the provider refused the payment from an IRIS source',
    );
    return { session, status: 'failed' };
  }

  private captured(session: CardRow<'iris_session'>, paymentToken: string, via: IrisArrival) {
    return markCaptured(this.store, session, paymentToken, `payment-created:${via}`);
  }

  private securityEvent(event: string, via: IrisArrival, session?: CardRow<'iris_session'>): void {
    this.logger.warn(
      { security: event, via, tenantId: session?.tenantId, sessionId: session?.id },
      'IRIS result refused: nothing was created',
    );
  }
}
