import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '#src/access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import { PSD2 } from '#src/upstreams/open-banking/psd2-schemas.js';
import { ConsentAccess, Granted } from '../consent-access/consent-access.decorator.js';
import {
  BUDGET_HEADERS,
  type ConsentAccessGrant,
} from '../consent-access/consent-access.service.js';
import { AccountsService } from './accounts.service.js';
import { AccountParams, TransactionParams } from './dto/account-params.dto.js';
import { TransactionsQuery } from './dto/transactions-query.dto.js';

const CONSENT_PROBLEMS = {
  401: 'The consent is not valid (CONSENT_INVALID), has expired (CONSENT_EXPIRED), or does not grant this access; type urn:portico:problem:consent:renewal-required when the bank no longer knows it (consentId names it; create a new consent)',
  403: 'The consent does not cover this account (RESOURCE_UNKNOWN)',
  404: 'No such consent for this tenant (CONSENT_UNKNOWN)',
  429: 'The consent used up its reads without the user for today (ACCESS_EXCEEDED; see Retry-After)',
};

const int32 = (minimum: number, maximum: number) =>
  ({ type: 'integer', format: 'int32', minimum, maximum }) as const;

const BUDGET_HEADER_DOCS = {
  [BUDGET_HEADERS.limit]: {
    description: 'Reads without the user (no PSU-IP-Address) this consent allows a day',
    schema: int32(1, 100),
  },
  [BUDGET_HEADERS.remaining]: {
    description: 'Reads without the user left today',
    schema: int32(0, 100),
  },
  [BUDGET_HEADERS.reset]: {
    description: 'Seconds until the budget renews (UTC midnight)',
    schema: int32(1, 86400),
  },
};

const AnswersWith = (schema: string) =>
  ApiOkResponse({ schema: PSD2.ref(schema), headers: BUDGET_HEADER_DOCS });

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
  @ConsentAccess({ operation: 'listAccounts', kind: 'ais', need: 'accounts' })
  @AnswersWith('AccountsListDto')
  listAccounts(@Granted() grant: ConsentAccessGrant) {
    return this.accounts.listAccounts(grant);
  }

  @Get(':accountId')
  @ApiOperation({
    summary: "Get an account's details",
    description: 'One account the consent covers.',
  })
  @ConsentAccess({
    operation: 'getAccountDetails',
    kind: 'ais',
    need: 'accounts',
    params: AccountParams,
  })
  @AnswersWith('AccountDetailsResponse')
  getAccountDetails(@Granted() grant: ConsentAccessGrant, @Param() params: AccountParams) {
    return this.accounts.getAccountDetails(grant, params.accountId);
  }

  @Get(':accountId/balances')
  @ApiOperation({
    summary: "Get an account's balances",
    description:
      'All balance types the bank reports; the consent must grant balances for the account.',
  })
  @ConsentAccess({
    operation: 'getAccountBalances',
    kind: 'ais',
    need: 'balances',
    params: AccountParams,
  })
  @AnswersWith('AccountBalancesDto')
  getAccountBalances(@Granted() grant: ConsentAccessGrant, @Param() params: AccountParams) {
    return this.accounts.getBalances(grant, params.accountId);
  }

  @Get(':accountId/transactions')
  @ApiOperation({
    summary: "Get an account's transactions",
    description:
      "Booked and pending, between dateFrom and dateTo inclusive; without them, the 90 days up to today (UTC), so that the account's `_links.transactions` answers as it stands.",
  })
  @ConsentAccess({
    operation: 'getAccountTransactions',
    kind: 'ais',
    need: 'transactions',
    params: AccountParams,
  })
  @AnswersWith('TransactionsListDto')
  getAccountTransactions(
    @Granted() grant: ConsentAccessGrant,
    @Param() params: AccountParams,
    @Query() query: TransactionsQuery,
  ) {
    return this.accounts.getTransactions(grant, params.accountId, query);
  }

  @Get(':accountId/transactions/:transactionId')
  @ApiOperation({
    summary: 'Get one transaction',
    description: 'The consent must grant transactions for the account.',
  })
  @ConsentAccess({
    operation: 'getTransactionDetails',
    kind: 'ais',
    need: 'transactions',
    params: TransactionParams,
  })
  @AnswersWith('TransactionsDetailsResponse')
  getTransactionDetails(@Granted() grant: ConsentAccessGrant, @Param() params: TransactionParams) {
    return this.accounts.getTransactionDetails(grant, params.accountId, params.transactionId);
  }
}
