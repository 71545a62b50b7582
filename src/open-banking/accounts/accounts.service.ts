import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ValidationFailedException } from '../../platform/errors/to-problem.js';
import { currentRequestId } from '../../platform/logging/request-context.js';
import { OpenBankingClient } from '../../upstreams/open-banking/open-banking.client.js';
import type { Consent } from '../consents/consent.entity.js';
import { UpstreamCaller } from '../../upstreams/http/upstream-caller.js';
import type { ConsentHeaders } from '../consent-access/consent-headers.js';
import { ConsentGuardService } from '../consent-access/consent-guard.service.js';
import type { TransactionsQuery } from './dto/transactions-query.dto.js';

/** Account reads under a consent: local rules first (ConsentGuardService), then the bank. */
@Injectable()
export class AccountsService {
  constructor(
    private readonly guard: ConsentGuardService,
    private readonly client: OpenBankingClient,
    private readonly upstream: UpstreamCaller,
  ) {}

  listAccounts(tenantId: string, headers: ConsentHeaders, reply: FastifyReply): Promise<unknown> {
    return this.guard.run(
      { tenantId, headers, operation: 'listAccounts', kind: 'ais' },
      reply,
      (consent) =>
        this.upstream.call('listAccounts', 'GET', () =>
          this.client.api.GET('/{brandId}/bg/v1/accounts', {
            params: { path: { brandId: consent.brandId }, header: this.headers(consent, headers) },
          }),
        ),
    );
  }

  getAccountDetails(
    tenantId: string,
    headers: ConsentHeaders,
    accountId: string,
    reply: FastifyReply,
  ): Promise<unknown> {
    return this.guard.run(
      {
        tenantId,
        headers,
        operation: 'getAccountDetails',
        kind: 'ais',
        account: { resourceId: accountId, need: 'accounts' },
      },
      reply,
      (consent) =>
        this.upstream.call('getAccountDetails', 'GET', () =>
          this.client.api.GET('/{brandId}/bg/v1/accounts/{accountId}', {
            params: {
              path: { brandId: consent.brandId, accountId },
              header: this.headers(consent, headers),
            },
          }),
        ),
    );
  }

  getBalances(
    tenantId: string,
    headers: ConsentHeaders,
    accountId: string,
    reply: FastifyReply,
  ): Promise<unknown> {
    return this.guard.run(
      {
        tenantId,
        headers,
        operation: 'getAccountBalances',
        kind: 'ais',
        account: { resourceId: accountId, need: 'balances' },
      },
      reply,
      (consent) =>
        this.upstream.call('getBalances', 'GET', () =>
          this.client.api.GET('/{brandId}/bg/v1/accounts/{accountId}/balances', {
            params: {
              path: { brandId: consent.brandId, accountId },
              header: this.headers(consent, headers),
            },
          }),
        ),
    );
  }

  getTransactions(
    tenantId: string,
    headers: ConsentHeaders,
    accountId: string,
    query: TransactionsQuery,
    reply: FastifyReply,
  ): Promise<unknown> {
    if (query.dateFrom > query.dateTo)
      throw new ValidationFailedException(
        [{ field: 'dateFrom', reason: 'dateFrom must not be after dateTo' }],
        'query',
      );
    return this.guard.run(
      {
        tenantId,
        headers,
        operation: 'getAccountTransactions',
        kind: 'ais',
        account: { resourceId: accountId, need: 'transactions' },
      },
      reply,
      (consent) =>
        this.upstream.call('getTransactions', 'GET', () =>
          this.client.api.GET('/{brandId}/bg/v1/accounts/{accountId}/transactions', {
            params: {
              path: { brandId: consent.brandId, accountId },
              query: { dateFrom: query.dateFrom, dateTo: query.dateTo },
              header: this.headers(consent, headers),
            },
          }),
        ),
    );
  }

  getTransactionDetails(
    tenantId: string,
    headers: ConsentHeaders,
    params: { accountId: string; transactionId: string },
    reply: FastifyReply,
  ): Promise<unknown> {
    return this.guard.run(
      {
        tenantId,
        headers,
        operation: 'getTransactionDetails',
        kind: 'ais',
        account: { resourceId: params.accountId, need: 'transactions' },
      },
      reply,
      (consent) =>
        this.upstream.call('getTransactionDetails', 'GET', () =>
          this.client.api.GET(
            '/{brandId}/bg/v1/accounts/{accountId}/transactions/{transactionId}',
            {
              params: {
                path: {
                  brandId: consent.brandId,
                  accountId: params.accountId,
                  transactionId: params.transactionId,
                },
                header: this.headers(consent, headers),
              },
            },
          ),
        ),
    );
  }

  private headers(consent: Consent, headers: ConsentHeaders) {
    return {
      'X-Request-ID': currentRequestId() ?? randomUUID(),
      'Consent-ID': consent.upstreamConsentId as string,
      ...(headers.psuIpAddress ? { 'PSU-IP-Address': headers.psuIpAddress } : {}),
    };
  }
}
