import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { signedResultRefused } from '../common/signed-result-refused.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { verifyIrisHash } from '#src/shared/iris/iris-hash.js';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import { CardStore, type CardRow } from '../store/card-store.service.js';
import { walletCallbackUrlOf, walletData, walletReferenceDigest } from './wallet-tokenization.js';

type WalletRow = CardRow<'wallet_token'>;

const REFERENCE = /^[A-Za-z0-9_-]{43}$/;
const CARD_TOKEN = /^ctn_[A-Za-z0-9]{1,60}$/;

/** Where a signed result came from: the provider's answer (cryptogram) or the browser (PAN-only). */
export type WalletArrival = 'answer' | 'callback';

/**
 * The signed result of a web-wallet tokenisation: Portico checks `hash` with the tenant's secret key
 * (constant time), that the signed callback_url is the one Portico gave this tokenisation and that the
 * signed token is a card token; only then is the `ctn_` recorded as chargeable (`verified`), and only
 * the signed values are used. A refusal is logged as a security event without the hash or any key.
 */
@Injectable()
export class CardWalletResultsService {
  constructor(
    private readonly store: CardStore,
    private readonly credentials: CardCredentialsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The card token the message's signature vouches for, or undefined (the refusal logged). */
  async verifiedToken(
    row: WalletRow,
    reference: string,
    message: Record<string, unknown>,
    via: WalletArrival,
  ): Promise<string | undefined> {
    const { secretKey } = await this.credentials.keysOf(row.tenantId);
    const signed = verifyIrisHash(secretKey, typeof message.hash === 'string' ? message.hash : '');
    if (!signed) {
      this.securityEvent('wallet-hash-invalid', via, row);
      return undefined;
    }
    if (
      signed.callback_url !== walletCallbackUrlOf(this.config, reference) ||
      typeof signed.token !== 'string' ||
      !CARD_TOKEN.test(signed.token) ||
      (message.token !== undefined && message.token !== signed.token)
    ) {
      this.securityEvent('wallet-message-of-another-tokenization', via, row);
      return undefined;
    }
    return signed.token;
  }

  /** Records the verified card token: from now on (and only now) the app may charge it. */
  async verified(row: WalletRow, cardToken: string, via: WalletArrival): Promise<void> {
    await this.store.settle(
      row,
      walletData(row, { token: cardToken }),
      'verified',
      `signature-valid:${via}`,
    );
  }

  /** The PAN-only result the payer's browser posts to Portico's callback_url. */
  async receive(reference: string, message: Record<string, unknown>): Promise<WalletRow> {
    const row = REFERENCE.test(reference)
      ? await this.store.byParent('wallet_token', walletReferenceDigest(reference))
      : undefined;
    if (!row) {
      this.securityEvent('wallet-unknown-tokenization', 'callback');
      throw new ProblemException({
        status: 404,
        type: PROBLEM_TYPES.notFound,
        title: 'Not Found',
        detail: 'No such wallet tokenisation',
      });
    }
    const cardToken = await this.verifiedToken(row, reference, message, 'callback');
    if (!cardToken)
      throw signedResultRefused('The hash is not the provider’s signature over this tokenisation');
    if (row.status === 'pending') await this.verified(row, cardToken, 'callback');
    else if (row.status === 'expired') {
      // Kept on the row, so that a charge of this late card token is refused without the provider.
      if (!row.token) {
        await this.store.settle(
          row,
          walletData(row, { token: cardToken }),
          'expired',
          'late-result',
        );
      }
      throw new ProblemException({
        status: 409,
        type: PROBLEM_TYPES.conflict,
        title: 'Conflict',
        detail:
          'The tokenisation expired before its result arrived: its card token is not chargeable',
      });
    } else if (row.token !== cardToken) {
      // A genuine result arriving again is answered as before; another card token is not taken.
      this.securityEvent('wallet-result-replaced', 'callback', row);
      throw signedResultRefused('This tokenisation already has its result');
    }
    return row;
  }

  private securityEvent(event: string, via: WalletArrival, row?: WalletRow): void {
    this.logger.warn(
      { security: event, via, tenantId: row?.tenantId, tokenizationId: row?.id },
      'wallet result refused: nothing was recorded as chargeable',
    );
  }
}
