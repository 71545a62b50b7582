import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import {
  CARD_CREDENTIALS_MISSING,
  CardCredentialsService,
} from '#src/access/merchant-credentials/card-credentials.service.js';
import type { CardTokenizationConfig } from './card-tokenization.dto.js';

/**
 * Tokenisation in the payer's browser: the tenant's public key, the provider's token endpoint and
 * Portico's page that uses both. Never the secret key.
 */
@Injectable()
export class CardTokenizationService {
  constructor(
    private readonly credentials: CardCredentialsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async configOf(tenantId: string): Promise<CardTokenizationConfig> {
    const tokenizationUrl = this.tokenizationUrl();
    const { publicKey } = await this.credentials.keysOf(tenantId);
    if (!publicKey)
      throw new ProblemException({
        status: 409,
        type: CARD_CREDENTIALS_MISSING,
        title: 'Card merchant keys missing',
        detail:
          'This tenant has no public key at the card provider; an operator sets it (PUT /v1/tenants/{tenantId}/card-credentials)',
      });
    return {
      publicKey,
      tokenizationUrl,
      pageUrl: `${this.config.http.publicBaseUrl}/card/tokenize`,
    };
  }

  /** Where a 3-D Secure challenge may come from: any issuer's https page, and the sandbox's pages. */
  challengeSources(): string {
    const sandbox = this.config.upstreams.card.sandboxControlUrl;
    return sandbox ? `https: ${new URL(sandbox).origin}` : 'https:';
  }

  /** The provider's token endpoint as browsers reach it. */
  tokenizationUrl(): string {
    const { tokenizationUrl, baseUrl } = this.config.upstreams.card;
    if (tokenizationUrl) return tokenizationUrl;
    if (!baseUrl)
      throw new ProblemException({
        status: 503,
        type: PROBLEM_TYPES.unavailable,
        title: 'Service Unavailable',
        detail: 'The card API is not configured (UPSTREAM_CARD_BASE_URL)',
      });
    return `${baseUrl.replace(/\/$/, '')}/tokens`;
  }
}
