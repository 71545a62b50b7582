import { Injectable } from '@nestjs/common';
import type { components } from '#src/generated/psd2.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import type { UpstreamAnswer } from '#src/upstreams/http/upstream-caller.js';
import { requestIdHeader } from '#src/upstreams/http/upstream-transport.js';
import { OpenBankingClient } from '#src/upstreams/open-banking/open-banking.client.js';
import type { ConsentAccessGrant } from '../consent-access/consent-access.service.js';
import { transactionsPeriod, type TransactionsQuery } from './dto/transactions-query.dto.js';
import { facadeLinks } from './facade-links.js';

type Schemas = components['schemas'];

/** Account reads under a consent the consent-access guard admitted: the bank's answer, links made Portico's. */
@Injectable()
export class AccountsService {
  constructor(private readonly bank: OpenBankingClient) {}

  async listAccounts(grant: ConsentAccessGrant): Promise<Schemas['AccountsListDto']> {
    const { brandId } = grant.consent;
    const answer = await this.bank.call('listAccounts', brandId, (api) =>
      api.GET('/{brandId}/bg/v1/accounts', {
        params: { path: { brandId }, header: this.headers(grant) },
      }),
    );
    return facadeLinks(this.passOn('listAccounts', answer));
  }

  async getAccountDetails(
    grant: ConsentAccessGrant,
    accountId: string,
  ): Promise<Schemas['AccountDetailsResponse']> {
    const { brandId } = grant.consent;
    const answer = await this.bank.call('getAccountDetails', brandId, (api) =>
      api.GET('/{brandId}/bg/v1/accounts/{accountId}', {
        params: { path: { brandId, accountId }, header: this.headers(grant) },
      }),
    );
    return facadeLinks(this.passOn('getAccountDetails', answer));
  }

  async getBalances(
    grant: ConsentAccessGrant,
    accountId: string,
  ): Promise<Schemas['AccountBalancesDto']> {
    const { brandId } = grant.consent;
    const answer = await this.bank.call('getBalances', brandId, (api) =>
      api.GET('/{brandId}/bg/v1/accounts/{accountId}/balances', {
        params: { path: { brandId, accountId }, header: this.headers(grant) },
      }),
    );
    return facadeLinks(this.passOn('getBalances', answer));
  }

  async getTransactions(
    grant: ConsentAccessGrant,
    accountId: string,
    query: TransactionsQuery,
  ): Promise<Schemas['TransactionsListDto']> {
    const { dateFrom, dateTo } = transactionsPeriod(query);
    if (dateFrom > dateTo)
      throw new ValidationFailedException(
        [{ field: 'dateFrom', reason: 'dateFrom must not be after dateTo' }],
        'query',
      );
    const { brandId } = grant.consent;
    const answer = await this.bank.call('getTransactions', brandId, (api) =>
      api.GET('/{brandId}/bg/v1/accounts/{accountId}/transactions', {
        params: {
          path: { brandId, accountId },
          query: { dateFrom, dateTo },
          header: this.headers(grant),
        },
      }),
    );
    return facadeLinks(this.passOn('getTransactions', answer));
  }

  async getTransactionDetails(
    grant: ConsentAccessGrant,
    accountId: string,
    transactionId: string,
  ): Promise<Schemas['TransactionsDetailsResponse']> {
    const { brandId } = grant.consent;
    const answer = await this.bank.call('getTransactionDetails', brandId, (api) =>
      api.GET('/{brandId}/bg/v1/accounts/{accountId}/transactions/{transactionId}', {
        params: { path: { brandId, accountId, transactionId }, header: this.headers(grant) },
      }),
    );
    return facadeLinks(this.passOn('getTransactionDetails', answer));
  }

  /** The bank's answer, or its refusal passed on (the consent-access guard's completion logs either). */
  private passOn<T>(operation: string, answer: UpstreamAnswer<T>): T {
    if (answer.status >= 400 || answer.data === undefined)
      throw this.bank.refusal(operation, answer);
    return answer.data;
  }

  /** The bank's Consent-ID, and the user's IP when present. */
  private headers(grant: ConsentAccessGrant) {
    return {
      ...requestIdHeader(),
      'Consent-ID': grant.consent.upstreamConsentId as string,
      ...(grant.psuIpAddress ? { 'PSU-IP-Address': grant.psuIpAddress } : {}),
    };
  }
}
