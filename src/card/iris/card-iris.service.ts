import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { AppConfig } from '../../platform/config/app-config.js';
import { APP_CONFIG } from '../../platform/config/config.module.js';
import type { JsonObject } from '../../platform/common/json.js';
import type { ProblemException } from '../../platform/errors/problem.js';
import { bindIdempotentResource } from '../../platform/idempotency/idempotency-binding.js';
import { inDoubtProblem, outcomeUnknown } from '../../upstreams/http/upstream-caller.js';
import type { CardResource } from '../store/card-resource.entity.js';
import { CardStore } from '../store/card-store.service.js';
import type {
  CreateIrisSessionRequest,
  IrisPayformView,
  IrisSessionView,
} from './card-iris.dto.js';

/** What an IRIS session row keeps besides the provider's answer. */
export interface IrisSessionData {
  token: string;
  signature: string;
  uuid: string;
  md: string;
  return_url: string;
  payment?: string;
}

/** The digest under which a session's callback reference is found (the reference is not stored). */
export const referenceDigest = (reference: string) =>
  createHash('sha256').update(reference, 'utf8').digest('base64url');

export const callbackUrlOf = (config: AppConfig, reference: string) =>
  `${config.http.publicBaseUrl}/v1/card/iris/callback/${reference}`;
export const webhookUrlOf = (config: AppConfig, reference: string) =>
  `${config.http.publicBaseUrl}/v1/card/iris/webhook/${reference}`;

export function irisView(row: CardResource): IrisSessionView {
  const data = (row.data ?? {}) as unknown as Partial<IrisSessionData>;
  return {
    id: row.id,
    token: row.token,
    status: row.status,
    amount: row.amount ?? 0,
    currency: 'EUR',
    md: data.md ?? '',
    paymentId: data.payment ?? null,
    returnUrl: data.return_url ?? '',
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
    await bindIdempotentResource(`/v1/card/iris/sessions/${row.id}`);
    const form = {
      amount: request.amount,
      currency: 'EUR',
      country: request.country,
      callback_url: callbackUrlOf(this.config, reference),
      webhook_url: webhookUrlOf(this.config, reference),
      ...(request.md !== undefined ? { md: request.md } : {}),
      ...(request.uuid !== undefined ? { uuid: request.uuid } : {}),
    };
    let session;
    try {
      session = await this.store.call(tenantId, 'createIrisSession', { form }, row);
    } catch (error) {
      if (!outcomeUnknown(error)) {
        await this.store.transition(row, 'failed', 'upstream-refused');
        throw error;
      }
      await this.store.transition(row, 'unknown', 'upstream-outcome-unknown');
      throw inDoubtProblem(error as ProblemException, {
        sessionId: row.id,
        resource: `/v1/card/iris/sessions/${row.id}`,
      });
    }
    const data: IrisSessionData = {
      token: session.token,
      signature: session.signature,
      uuid: session.uuid,
      md: session.md,
      return_url: request.returnUrl,
    };
    await this.store.settle(row, data as unknown as JsonObject, session.status, 'upstream-created');
    return irisView(row);
  }

  async get(tenantId: string, id: string): Promise<IrisSessionView> {
    return irisView(await this.store.byId(tenantId, 'iris_session', id));
  }

  /** The provider's payment form for the session, asked with the tenant's public key. */
  async payform(tenantId: string, id: string): Promise<IrisPayformView> {
    const row = await this.store.byId(tenantId, 'iris_session', id);
    const data = row.data as unknown as IrisSessionData | null;
    if (!data?.signature) throw this.store.notKnownYet('IRIS session', row);
    const answer = await this.store.call(
      tenantId,
      'createIrisPayform',
      { form: { amount: row.amount, token: data.signature, currency: 'EUR', uuid: data.uuid } },
      row,
      { publicKey: true, keyInBody: 'pk' },
    );
    if (row.status === 'created') await this.store.transition(row, 'initiated', 'payform-opened');
    return { payload: answer.data.payload };
  }
}
