import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  type HeadersObject,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Inject } from '@nestjs/common';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import type { PosTransactionRequest } from '#src/upstreams/pos/pos.client.js';
import { POS } from '#src/upstreams/pos/pos-schemas.js';
import {
  ApiPosAnswer,
  ApiPosBody,
  ApiPosPathParam,
  ApiPosProblems,
  PosBody,
  PosPath,
  posFacade,
} from '../common/pos-api.js';
import { POS_LIST_STATUSES, PosTransactionsQuery } from './pos-transactions-query.dto.js';
import { PosTransactionsService } from './pos-transactions.service.js';
import { WaitSeconds } from './wait-seconds.pipe.js';

const LOCATION: HeadersObject = {
  Location: {
    description: 'The transaction in Portico, to poll until the terminal has decided',
    required: true,
    schema: { type: 'string', format: 'uri-reference', maxLength: 200 },
  },
};

@ApiTags('POS terminals')
@ApiStandardProblems()
@ApiPosProblems()
@Auth('app')
@Controller('v1/pos/transactions')
export class PosTransactionsController {
  constructor(
    private readonly transactions: PosTransactionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @Idempotent()
  @ApiOperation({
    summary: 'Start a payment or a void on a terminal',
    description:
      "`type: payment` shows the amount on the terminal for the payer; `type: void` voids a captured payment of the last 24 hours on the same terminal (its batch not yet settled). `transactionId` (a uuid v4 you choose) is the idempotency key: the same transactionId again starts nothing and answers the first request's result (another request under it: 422). The terminal may take minutes (the provider holds the call up to 180 s): Portico waits at most `wait` seconds (default POS_SYNC_WAIT_MS) and then answers 202 with the transaction's address; poll it (GET) until its status is CAPTURED, FAILED or CANCELLED. A lost answer from the provider is settled by reading the transaction there by its transactionId: never lost, never doubled.",
  })
  @ApiQuery({
    name: 'wait',
    required: false,
    description: 'Seconds to wait for the terminal before answering 202 (0 to POS_SYNC_WAIT_MS)',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 600 },
  })
  @ApiPosBody('PosTransactionRequest', {
    transactionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    amount: 1240,
    tip: 100,
    currency: 'EUR',
    type: 'payment',
    terminal: 'trm_Xk2v9LmQ0pR7sT4uV6wY8zA1',
  })
  @ApiPosAnswer(200, 'PosTransactionResult', 'Decided: CAPTURED, FAILED or CANCELLED')
  @ApiPosAnswer(
    202,
    'PosTransactionResult',
    'The terminal has not decided yet (INITIATING, PENDING): poll Location',
    LOCATION,
  )
  @ApiProblems({
    422: 'Refused by the provider (`upstream.code` 10003 terminal unknown or disabled, 10008 busy, 10009-10013 void refusals), or the transactionId was used for another request',
  })
  async createPosTransaction(
    @CurrentPrincipal() principal: Principal,
    @Body(PosBody) body: PosTransactionRequest,
    @Query('wait', WaitSeconds) wait: number | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const waitMs = Math.min(
      wait === undefined ? Infinity : wait * 1000,
      this.config.upstreams.pos.syncWaitMs,
    );
    const answer = await this.transactions.start(principal.tenantId, body, waitMs);
    reply.code(answer.status);
    if (answer.status === 202) reply.header('Location', answer.location);
    return posFacade('PosTransactionResult', answer.body);
  }

  @Get()
  @ApiOperation({
    summary: "List the tenant's POS transactions",
    description:
      "From Portico's own record, without calling the provider: every payment and void the provider took (not those it refused), newest first, each as GET answers it (a voided payment `VOIDED` with `voidedBy`; one the terminal has not decided as Portico last saw it). Filtered by terminal, status, type and when it was started (`createdFrom` inclusive, `createdTo` exclusive); paged by `page` and `pageSize`.",
  })
  @ApiOkResponse({
    description: 'A page of transactions',
    schema: {
      type: 'object',
      required: ['totalCount', 'page', 'pageSize', 'items'],
      properties: {
        totalCount: { type: 'integer', format: 'int32', minimum: 0, maximum: 100000000 },
        page: { type: 'integer', format: 'int32', minimum: 1, maximum: 100000 },
        pageSize: { type: 'integer', format: 'int32', minimum: 1, maximum: 200 },
        items: { type: 'array', maxItems: 200, items: POS.ref('PosTransactionResult') },
      },
    },
  })
  async listPosTransactions(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PosTransactionsQuery,
  ) {
    const page = await this.transactions.list(principal.tenantId, {
      terminal: query.terminal,
      type: query.type,
      statuses: query.status && statusesOf(query.status),
      from: query.createdFrom ? new Date(query.createdFrom) : undefined,
      before: query.createdTo ? new Date(query.createdTo) : undefined,
      page: query.page ?? 1,
      pageSize: query.pageSize ?? 50,
    });
    return { ...page, items: page.items.map((item) => posFacade('PosTransactionResult', item)) };
  }

  @Get(':transactionId')
  @ApiOperation({
    summary: 'Get a POS transaction',
    description:
      'By its transactionId. While the terminal has not decided, Portico asks the provider (status INITIATING or PENDING); once decided, the stored result.',
  })
  @ApiPosPathParam(
    'transactionId',
    'PosTransactionId',
    'The transactionId the payment or void was started with',
  )
  @ApiPosAnswer(200, 'PosTransactionResult', 'The transaction')
  @ApiProblems({ 404: 'No such transaction for this tenant' })
  async getPosTransaction(
    @CurrentPrincipal() principal: Principal,
    @Param('transactionId', PosPath('PosTransactionId')) transactionId: string,
  ) {
    const answer = await this.transactions.get(principal.tenantId, transactionId);
    return posFacade('PosTransactionResult', answer.body);
  }
}

/** The rows' statuses a listed status selects: an undecided transaction's row is `creating` or `unknown`. */
function statusesOf(status: (typeof POS_LIST_STATUSES)[number]): string[] {
  return status === 'INITIATING' || status === 'PENDING' ? ['creating', 'unknown'] : [status];
}
