import { applyDecorators, Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Auth, CurrentPrincipal } from '../../access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '../../platform/errors/api-problem-responses.js';
import type { Principal } from '../../access/tenants/tenants.service.js';
import { psd2Ref } from '../../platform/openapi/upstream-schema.decorator.js';
import { UPSTREAM_PROBLEMS } from '../../upstreams/http/upstream-problems.js';
import { AccountsService } from './accounts.service.js';
import { ConsentHeadersOf, type ConsentHeaders } from '../consent-access/consent-headers.js';
import { BUDGET_HEADERS } from '../consent-access/consent-guard.service.js';
import { AccountParams, TransactionParams } from './dto/account-params.dto.js';
import { TransactionsQuery } from './dto/transactions-query.dto.js';

const CONSENT_PROBLEMS = {
  401: 'The consent is not valid (CONSENT_INVALID), has expired (CONSENT_EXPIRED), or does not grant this access',
  403: 'The consent does not cover this account (RESOURCE_UNKNOWN)',
  404: 'No such consent for this tenant (CONSENT_UNKNOWN)',
  429: 'The consent used up its reads without the user for today (ACCESS_EXCEEDED; see Retry-After)',
};

function budgetHeaders() {
  return {
    [BUDGET_HEADERS.limit]: {
      description: 'Reads without the user (no PSU-IP-Address) this consent allows a day',
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 100 },
    },
    [BUDGET_HEADERS.remaining]: {
      description: 'Reads without the user left today',
      schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 100 },
    },
    [BUDGET_HEADERS.reset]: {
      description: 'Seconds until the budget renews (UTC midnight)',
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86400 },
    },
  };
}

const ConsentHeaderDocs = () =>
  applyDecorators(
    ApiHeader({
      name: 'Consent-ID',
      required: true,
      description: "Portico's consentId of a valid account-information consent",
      schema: { type: 'string', format: 'uuid', maxLength: 36 },
    }),
    ApiHeader({
      name: 'PSU-IP-Address',
      required: false,
      description:
        "The user's IP address when the user is present; without it the read counts against the consent's daily budget",
      schema: { type: 'string', maxLength: 45, pattern: '^[0-9A-Fa-f:.]{2,45}$' },
    }),
  );

@ApiTags('Accounts')
@ApiStandardProblems()
@ApiProblems({ ...UPSTREAM_PROBLEMS, ...CONSENT_PROBLEMS })
@Auth('app')
@Controller('v1/accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Get()
  @ApiOperation({
    summary: 'List the accounts of a consent',
    description: 'The accounts the consent covers, as the bank describes them.',
  })
  @ConsentHeaderDocs()
  @ApiOkResponse({ schema: psd2Ref('AccountsListDto'), headers: budgetHeaders() })
  listAccounts(
    @CurrentPrincipal() principal: Principal,
    @ConsentHeadersOf() headers: ConsentHeaders,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return this.accounts.listAccounts(principal.tenantId, headers, reply);
  }

  @Get(':accountId')
  @ApiOperation({
    summary: "Get an account's details",
    description: 'One account the consent covers.',
  })
  @ConsentHeaderDocs()
  @ApiOkResponse({ schema: psd2Ref('AccountDetailsResponse'), headers: budgetHeaders() })
  getAccountDetails(
    @CurrentPrincipal() principal: Principal,
    @ConsentHeadersOf() headers: ConsentHeaders,
    @Param() params: AccountParams,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return this.accounts.getAccountDetails(principal.tenantId, headers, params.accountId, reply);
  }

  @Get(':accountId/balances')
  @ApiOperation({
    summary: "Get an account's balances",
    description:
      'All balance types the bank reports; the consent must grant balances for the account.',
  })
  @ConsentHeaderDocs()
  @ApiOkResponse({ schema: psd2Ref('AccountBalancesDto'), headers: budgetHeaders() })
  getAccountBalances(
    @CurrentPrincipal() principal: Principal,
    @ConsentHeadersOf() headers: ConsentHeaders,
    @Param() params: AccountParams,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return this.accounts.getBalances(principal.tenantId, headers, params.accountId, reply);
  }

  @Get(':accountId/transactions')
  @ApiOperation({
    summary: "Get an account's transactions",
    description: 'Booked and pending, between dateFrom and dateTo inclusive.',
  })
  @ConsentHeaderDocs()
  @ApiOkResponse({ schema: psd2Ref('TransactionsListDto'), headers: budgetHeaders() })
  getAccountTransactions(
    @CurrentPrincipal() principal: Principal,
    @ConsentHeadersOf() headers: ConsentHeaders,
    @Param() params: AccountParams,
    @Query() query: TransactionsQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return this.accounts.getTransactions(
      principal.tenantId,
      headers,
      params.accountId,
      query,
      reply,
    );
  }

  @Get(':accountId/transactions/:transactionId')
  @ApiOperation({
    summary: 'Get one transaction',
    description: 'The consent must grant transactions for the account.',
  })
  @ConsentHeaderDocs()
  @ApiOkResponse({ schema: psd2Ref('TransactionsDetailsResponse'), headers: budgetHeaders() })
  getTransactionDetails(
    @CurrentPrincipal() principal: Principal,
    @ConsentHeadersOf() headers: ConsentHeaders,
    @Param() params: TransactionParams,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return this.accounts.getTransactionDetails(principal.tenantId, headers, params, reply);
  }
}
