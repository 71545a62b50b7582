import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/psd2.js';
import { requestIdHeader } from '#src/upstreams/http/upstream-transport.js';
import { OpenBankingClient } from '#src/upstreams/open-banking/open-banking.client.js';
import type { ConsentAccessGrant } from '../consent-access/consent-access.service.js';
import type { FundsConfirmationRequest } from './funds-confirmation.dto.js';

/** Whether an account covers an amount, asked of the bank under an admitted funds consent. */
@Injectable()
export class FundsConfirmationService {
  constructor(private readonly bank: OpenBankingClient) {}

  async confirmFunds(
    grant: ConsentAccessGrant,
    request: FundsConfirmationRequest,
  ): Promise<components['schemas']['ConfirmationOfFundsResponse']> {
    const { brandId, upstreamConsentId } = grant.consent;
    const answer = await this.bank.call('confirmFunds', brandId, (api) =>
      api.POST('/{brandId}/bg/v1/funds-confirmations', {
        params: {
          path: { brandId },
          header: { ...requestIdHeader(), 'Consent-ID': upstreamConsentId as string },
        },
        body: { account: request.account, instructedAmount: request.instructedAmount },
      }),
    );
    if (answer.status >= 400 || !answer.data) throw this.bank.refusal('confirmFunds', answer);
    return answer.data;
  }
}
