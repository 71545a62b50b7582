import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../../platform/config/app-config.js';
import { APP_CONFIG } from '../../platform/config/config.module.js';
import type { JsonObject } from '../../platform/common/json.js';
import { ProblemException } from '../../platform/errors/problem.js';
import { bindIdempotentResource } from '../../platform/idempotency/idempotency-binding.js';
import { inDoubtProblem, outcomeUnknown } from '../../upstreams/http/upstream-caller.js';
import { UPSTREAM_PROBLEM_TYPES } from '../../platform/errors/upstream-problems.js';
import { CardStore } from '../store/card-store.service.js';
import type { WalletTokenizationView } from './card-wallets.dto.js';
import { CardWalletResultsService } from './card-wallet-results.service.js';
import type { WalletTokenizationRequest } from './wallet-body.pipe.js';
import {
  walletCallbackUrlOf,
  walletReferenceDigest,
  WALLET_PENDING_MS,
  walletView,
  type WalletTokenizationData,
} from './wallet-tokenization.js';

/**
 * Web-wallet tokenisations the app asks for. Portico calls the provider with the tenant's public key
 * and its own callback_url (bound to the tokenisation by an unguessable reference), and records the
 * card token as chargeable only once it has verified the provider's signature over it.
 */
@Injectable()
export class CardWalletsService {
  constructor(
    private readonly store: CardStore,
    private readonly results: CardWalletResultsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async tokenize(
    tenantId: string,
    request: WalletTokenizationRequest,
  ): Promise<WalletTokenizationView> {
    const reference = randomBytes(32).toString('base64url');
    const base: WalletTokenizationData = {
      md: (request.form.md as string | undefined) ?? '',
      return_url: request.returnUrl,
    };
    const row = await this.store.begin(tenantId, 'wallet_token', {
      amount: request.form.amount as number,
      parentToken: walletReferenceDigest(reference),
      data: base as unknown as JsonObject,
    });
    await bindIdempotentResource(`/v1/card/wallets/tokenizations/${row.id}`);
    const form = {
      currency: 'EUR',
      ...request.form,
      callback_url: walletCallbackUrlOf(this.config, reference),
      sandbox: this.config.mode === 'sandbox' ? 1 : 0,
      uuid: row.id,
    };
    let answer;
    try {
      answer = await this.store.call(tenantId, 'tokenizeWebWallet', { form }, row, {
        publicKey: true,
      });
    } catch (error) {
      if (!outcomeUnknown(error)) {
        await this.store.transition(row, 'failed', 'upstream-refused');
        throw error;
      }
      // The provider keeps no lookup of tokenisations: a card token it may have made is never verified.
      await this.store.transition(row, 'unknown', 'upstream-outcome-unknown');
      throw inDoubtProblem(error as ProblemException, {
        tokenizationId: row.id,
        resource: `/v1/card/wallets/tokenizations/${row.id}`,
      });
    }
    const data: WalletTokenizationData = { ...base, md: answer.data.md, flow: answer.flow };
    if (answer.flow === 'form') {
      const pending = { ...data, form: answer.data.payload ?? '' };
      await this.store.settle(row, pending as unknown as JsonObject, 'pending', 'upstream-form');
      return walletView(row);
    }
    row.data = data as unknown as JsonObject;
    const cardToken = await this.results.verifiedToken(row, reference, answer.data, 'answer');
    if (!cardToken) {
      // The card token it names is kept as rejected: a charge of it is refused without the provider.
      const claimed = { ...data, token: answer.data.token ?? null };
      await this.store
        .settle(row, claimed as unknown as JsonObject, 'rejected', 'signature-invalid')
        .catch(() => this.store.transition(row, 'rejected', 'signature-invalid'));
      throw new ProblemException({
        status: 502,
        type: UPSTREAM_PROBLEM_TYPES.badGateway,
        title: 'Bad Gateway',
        detail:
          "The provider's answer does not carry its valid signature over this tokenisation: nothing was recorded as chargeable",
        extensions: {
          tokenizationId: row.id,
          resource: `/v1/card/wallets/tokenizations/${row.id}`,
        },
      });
    }
    await this.results.verified(row, cardToken, 'answer');
    return walletView(row);
  }

  async get(tenantId: string, id: string): Promise<WalletTokenizationView> {
    const row = await this.store.byId(tenantId, 'wallet_token', id);
    if (row.status === 'pending' && Date.now() - row.createdAt.getTime() >= WALLET_PENDING_MS)
      await this.store.transition(row, 'expired', 'payer-did-not-return');
    return walletView(row);
  }
}
