import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import type {
  CreateIrisSessionRequest,
  IrisPayformView,
  IrisSessionView,
} from './card-iris.dto.js';

/** What an IRIS session row keeps besides the provider's answer. */
export type IrisSessionData = {
  token: string;
  signature: string;
  uuid: string;
  md: string;
  return_url: string;
  payment?: string;
  /** When Portico holds the session expired: its creation plus the lifetime the provider stated. */
  expires_at?: string;
  /** The provider's expiration_date, on the provider's clock. */
  provider_expires?: string;
};

/** The lifetime when the provider's answer does not state one (card.yaml createIrisSession). */
export const IRIS_SESSION_LIFETIME_MS = 15 * 60_000;
/** Statuses a session leaves by expiring: the payer has not approved yet. */
const OPEN = new Set(['created', 'initiated']);
/** A payment row whose outcome at the provider is not known yet. */
const IN_DOUBT = new Set(['creating', 'unknown']);

/** The provider's lifetime (expiration_date - date_created, both on its clock), so clock skew does not matter. */
export function lifetimeOf(session: { date_created?: string; expiration_date?: string }): number {
  const lifetime =
    Date.parse(session.expiration_date ?? '') - Date.parse(session.date_created ?? '');
  return Number.isFinite(lifetime) && lifetime > 0 ? lifetime : IRIS_SESSION_LIFETIME_MS;
}

/** Whether the provider's answer, dated by its own clock, comes after the session's expiration_date. */
export function expiredAtProvider(data: IrisSessionData, answerDate: string | undefined): boolean {
  const providerNow = Date.parse(answerDate ?? '');
  const expires = Date.parse(data.provider_expires ?? '');
  // The Date header has whole seconds: compare with the expiry's second.
  return providerNow >= Math.floor(expires / 1000) * 1000;
}

type IrisRow = CardRow<'iris_session'>;

export const irisSessionExpired = (row: IrisRow) => {
  const expiresAt = row.data?.expires_at ?? null;
  return new ProblemException({
    status: 410,
    type: 'urn:portico:problem:iris-session-expired',
    title: 'IRIS session expired',
    detail: `IRIS session ${row.id} has expired: the payer can no longer pay it; start a new session`,
    extensions: {
      id: row.id,
      resource: `/v1/card/iris/sessions/${row.id}`,
      resourceStatus: 'expired',
      expiresAt,
    },
  });
};

/** Settles a session as paid by the payment made from its source. */
export async function markCaptured(
  store: CardStore,
  session: IrisRow,
  paymentToken: string,
  cause: string,
): Promise<void> {
  if (session.data)
    await store.settle(session, { ...session.data, payment: paymentToken }, 'captured', cause);
  else await store.transition(session, 'captured', cause);
}

/** The digest under which a session's callback reference is found (the reference is not stored). */
export const referenceDigest = (reference: string) =>
  createHash('sha256').update(reference, 'utf8').digest('base64url');

export const callbackUrlOf = (config: AppConfig, reference: string) =>
  `${config.http.publicBaseUrl}/v1/card/iris/callback/${reference}`;
export const webhookUrlOf = (config: AppConfig, reference: string) =>
  `${config.http.publicBaseUrl}/v1/card/iris/webhook/${reference}`;

export function irisView(row: IrisRow): IrisSessionView {
  const data: Partial<IrisSessionData> = row.data ?? {};
  return {
    id: row.id,
    token: row.token,
    status: row.status,
    amount: row.amount ?? 0,
    currency: 'EUR',
    md: data.md ?? '',
    paymentId: data.payment ?? null,
    returnUrl: data.return_url ?? '',
    expiresAt: data.expires_at ?? null,
  };
}

/**
 * IRIS sessions the app asks for. Portico is the merchant's server: the session's callback_url and
 * webhook_url are Portico's own, bound to the session by an unguessable reference, and the amount the
 * payment will be made for is the one stored here (see CardIrisResultsService).
 */
@Injectable()
export class CardIrisService {
  constructor(
    private readonly store: CardStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(tenantId: string, request: CreateIrisSessionRequest): Promise<IrisSessionView> {
    const reference = randomBytes(32).toString('base64url');
    const row = await this.store.begin(tenantId, 'iris_session', {
      amount: request.amount,
      parentToken: referenceDigest(reference),
    });
    const form: CardForm<'CreateIrisSessionForm'> = {
      amount: request.amount,
      currency: 'EUR',
      country: request.country,
      callback_url: callbackUrlOf(this.config, reference),
      webhook_url: webhookUrlOf(this.config, reference),
      ...(request.md !== undefined ? { md: request.md } : {}),
      ...(request.uuid !== undefined ? { uuid: request.uuid } : {}),
    };
    await this.store.create(row, {
      resource: `/v1/card/iris/sessions/${row.id}`,
      names: () => ({ sessionId: row.id }),
      send: () => this.store.call(tenantId, 'createIrisSession', { form }, row),
      settle: (session) =>
        this.store.settle(
          row,
          {
            token: session.token,
            signature: session.signature,
            uuid: session.uuid,
            md: session.md,
            return_url: request.returnUrl,
            expires_at: new Date(Date.now() + lifetimeOf(session)).toISOString(),
            provider_expires: session.expiration_date,
          },
          session.status,
          'upstream-created',
        ),
    });
    return irisView(row);
  }

  async get(tenantId: string, id: string): Promise<IrisSessionView> {
    const row = await this.current(tenantId, id);
    await this.capturedIfPaid(row, 'payment-settled');
    return irisView(row);
  }

  /**
   * A pending session brought up to date by the provider sync: expired as a GET finds it, or captured
   * once the payment from its source is settled (by the resolver, after a lost answer).
   */
  async refresh(id: string): Promise<void> {
    const row = await this.store.row('iris_session', id);
    if (!row) return;
    await this.expireIfDue(row);
    await this.capturedIfPaid(row, 'provider-sync:payment-settled');
  }

  /** An approved session whose payment was settled after its answer was lost is captured. */
  private async capturedIfPaid(row: IrisRow, cause: string): Promise<void> {
    if (row.status !== 'authorized' || !row.token) return;
    const payment = await this.store.liveByMerchantRef(row.tenantId, `iris-${row.token}`);
    if (payment?.token && !IN_DOUBT.has(payment.status))
      await markCaptured(this.store, row, payment.token, cause);
  }

  /** The session, moved to `expired` once its lifetime has passed on Portico's clock. */
  private async current(tenantId: string, id: string): Promise<IrisRow> {
    return this.expireIfDue(await this.store.byId(tenantId, 'iris_session', id));
  }

  private async expireIfDue(row: IrisRow): Promise<IrisRow> {
    const expiresAt = row.data?.expires_at;
    if (OPEN.has(row.status) && expiresAt && Date.now() >= Date.parse(expiresAt))
      await this.store.transition(row, 'expired', 'lifetime-passed');
    return row;
  }

  /** The provider's payment form for the session, asked with the tenant's public key. */
  async payform(tenantId: string, id: string): Promise<IrisPayformView> {
    const row = await this.current(tenantId, id);
    const data = row.data;
    // A session's row holds its amount from the start (begin).
    if (!data?.signature || row.amount === null) throw this.store.notKnownYet('IRIS session', row);
    if (row.status === 'expired') throw irisSessionExpired(row);
    const answer = await this.store.callRaw(
      tenantId,
      'createIrisPayform',
      { form: { amount: row.amount, token: data.signature, currency: 'EUR', uuid: data.uuid } },
      row,
      { publicKey: true, keyInBody: 'pk' },
    );
    if (answer.status >= 400) {
      // The provider refuses the form of a session past its lifetime (80002 token), on its own clock.
      if (OPEN.has(row.status) && expiredAtProvider(data, answer.headers.date)) {
        await this.store.transition(row, 'expired', 'expired-at-provider');
        throw irisSessionExpired(row);
      }
      throw this.store.client.refusal('createIrisPayform', answer);
    }
    if (row.status === 'created') await this.store.transition(row, 'initiated', 'payform-opened');
    return { payload: answer.data?.data.payload ?? '' };
  }
}
