import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiProblems, ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import {
  ApiPosAnswer,
  ApiPosPathParam,
  ApiPosProblems,
  ApiPosQuery,
  PosPath,
  PosQuery,
  type PosQueryOf,
  posFacade,
} from '../common/pos-api.js';
import { PosTerminalsService } from './pos-terminals.service.js';

@ApiTags('POS terminals')
@ApiStandardProblems()
@ApiPosProblems()
@Auth('app')
@Controller('v1/pos/terminals')
export class PosTerminalsController {
  constructor(private readonly terminals: PosTerminalsService) {}

  @Get()
  @ApiOperation({
    summary: "List the tenant's POS terminals",
    description: 'In onboarding order; `page` from 1, `limit` up to 50 (default 10).',
  })
  @ApiPosQuery('listPosTerminals')
  @ApiPosAnswer(200, 'PosTerminalPage', 'A page of terminals')
  async listPosTerminals(
    @CurrentPrincipal() principal: Principal,
    @Query(PosQuery('listPosTerminals')) query: PosQueryOf<'listPosTerminals'>,
  ) {
    return posFacade('PosTerminalPage', await this.terminals.list(principal.tenantId, query));
  }

  @Get(':terminal/pending')
  @ApiOperation({
    summary: 'List transactions a terminal did not report to the ERP',
    description:
      'For ERP reconciliation: the transactions an ERP-linked terminal made on its own (manual after a reported malfunction, preload results, manual credits), most recent first; `from`/`to` are days (YYYY-MM-DD), `to` not before `from` (refused by Portico, naming `to`, without calling the provider). Only a terminal linked to an ERP system has a pending list: the provider’s 10003 about an enabled terminal of the merchant is answered 422 naming `terminal`.',
  })
  @ApiPosPathParam('terminal', 'PosTerminalToken', 'The terminal (`trm_…`)')
  @ApiPosQuery('listPendingPosTransactions')
  @ApiPosAnswer(200, 'PosTransactionPage', 'A page of transactions')
  @ApiProblems({
    422: 'Unknown or disabled terminal, or not linked to an ERP system (`upstream.code` 10003; `errors` names `terminal`)',
  })
  async listPendingPosTransactions(
    @CurrentPrincipal() principal: Principal,
    @Param('terminal', PosPath('PosTerminalToken')) terminal: string,
    @Query(PosQuery('listPendingPosTransactions')) query: PosQueryOf<'listPendingPosTransactions'>,
  ) {
    return posFacade(
      'PosTransactionPage',
      await this.terminals.pending(principal.tenantId, terminal, query),
    );
  }
}
