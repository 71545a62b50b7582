import { Inject, Injectable } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ProblemException } from '#src/platform/errors/problem.js';
import { UPSTREAM_PROBLEM_TYPES } from '#src/platform/errors/upstream-problems.js';
import type { CardForm } from '../common/card-body.pipe.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import type { WalletTokenizationView } from './card-wallets.dto.js';
import { CardWalletResultsService } from './card-wallet-results.service.js';
import { walletPayerRefusal, type WalletTokenizationRequest } from './wallet-body.pipe.js';
import {
  walletCallbackUrlOf,
  walletData,
  walletReferenceDigest,
  WALLET_PENDING_MS,
  walletView,
  type WalletTokenizationData,
} from './wallet-tokenization.js';

type WebWalletTokenization = components['schemas']['WebWalletTokenization'];

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
      md: request.form.md ?? '',
      return_url: request.returnUrl,
    };
    const row = await this.store.begin(tenantId, 'wallet_token', {
      amount: request.form.amount,
      parentToken: walletReferenceDigest(reference),
      data: base,
    });
    const form: CardForm<'WebWalletTokenizeForm'> = {
      currency: 'EUR',
      ...request.form,
      callback_url: walletCallbackUrlOf(this.config, reference),
      sandbox: this.config.mode === 'sandbox' ? 1 : 0,
      uuid: row.id,
    };
    // The provider keeps no lookup of tokenisations: a card token it may have made is never verified.
    await this.store.create(row, {
      resource: `/v1/card/wallets/tokenizations/${row.id}`,
      names: () => ({ tokenizationId: row.id }),
      send: () =>
        this.store
          .call(tenantId, 'tokenizeWebWallet', { form }, row, { publicKey: true })
          .catch((error: unknown) => {
            throw walletPayerRefusal(error) ?? error;
          }),
      settle: (answer) => this.answered(row, reference, base, answer),
    });
    return walletView(row);
  }

  /** Takes the provider's answer: a form for the payer, or a card token once its signature is verified. */
  private async answered(
    row: CardRow<'wallet_token'>,
    reference: string,
    base: WalletTokenizationData,
    answer: WebWalletTokenization,
  ): Promise<void> {
    const data: WalletTokenizationData = { ...base, md: answer.data.md, flow: answer.flow };
    if (answer.flow === 'form') {
      await this.store.settle(
        row,
        { ...data, form: answer.data.payload ?? '' },
        'pending',
        'upstream-form',
      );
      return;
    }
    row.data = data;
    const cardToken = await this.results.verifiedToken(row, reference, answer.data, 'answer');
    if (!cardToken) {
      // The card token it names is kept as rejected: a charge of it is refused without the provider.
      const claimed = { ...data, token: answer.data.token ?? null };
      await this.store
        .settle(row, claimed, 'rejected', 'signature-invalid')
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
  }

  async get(tenantId: string, id: string): Promise<WalletTokenizationView> {
    let row = await this.store.byId(tenantId, 'wallet_token', id);
    if (row.status === 'verified' && (await this.mendCharged(row.id)) > 0)
      row = await this.store.byId(tenantId, 'wallet_token', id);
    if (row.status === 'pending' && Date.now() - row.createdAt.getTime() >= WALLET_PENDING_MS)
      await this.store.transition(row, 'expired', 'payer-did-not-return');
    return walletView(row);
  }

  /**
   * Tokenisations whose card token paid a payment Portico holds as made, still `verified` (the two
   * writes were parted by a fault): made `charged` with that payment. Each resolver pass, and a read.
   */
  async mendCharged(walletId?: string): Promise<number> {
    const paid = await this.store.walletsPaid(50, walletId);
    for (const { wallet, payment } of paid)
      await this.store.settle(
        wallet,
        walletData(wallet, { payment }),
        'charged',
        'resolver:payment-made',
      );
    return paid.length;
  }
}
