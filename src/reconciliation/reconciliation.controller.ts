import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '../platform/errors/api-problem-responses.js';
import {
  CreateReconciliationRunRequest,
  ReconciliationDriftPage,
  ReconciliationDriftsQuery,
  ReconciliationRunPage,
  ReconciliationRunsQuery,
  ReconciliationRunView,
} from './reconciliation.dto.js';
import { ReconciliationRuns } from './reconciliation-runs.service.js';

@ApiTags('Reconciliation')
@ApiStandardProblems()
@Controller('v1')
export class ReconciliationController {
  constructor(private readonly runs: ReconciliationRuns) {}

  @Post('reconciliation/runs')
  @HttpCode(201)
  @Auth('operator')
  @ApiOperation({
    summary: "Reconcile a tenant's window of days now (operator)",
    description:
      "Compares the tenant's records with the provider's for the days `from` to `to` (UTC, inclusive, at most 31 days) and answers the finished run: counts per class, provider calls, duration. Moves rows Portico was behind on, adopts resources found only at the provider, flags drifts (see docs/reconciliation.md). Role operator.",
  })
  @ApiCreatedResponse({ type: ReconciliationRunView })
  @ApiProblems({
    404: 'No such tenant',
    409: 'Another replica is running this window',
  })
  createReconciliationRun(
    @Body() body: CreateReconciliationRunRequest,
  ): Promise<ReconciliationRunView> {
    return this.runs.onDemand(body);
  }

  @Get('audit/reconciliation/runs')
  @Auth('auditor')
  @ApiOperation({
    summary: 'List reconciliation runs (auditor)',
    description:
      "Every tenant's reconciliation runs, newest first: window, trigger, outcome, counts per class, provider calls, duration.",
  })
  @ApiOkResponse({ type: ReconciliationRunPage })
  listReconciliationRuns(@Query() query: ReconciliationRunsQuery): Promise<ReconciliationRunPage> {
    return this.runs.listRuns(query);
  }

  @Get('audit/reconciliation/drifts')
  @Auth('auditor')
  @ApiOperation({
    summary: 'List reconciliation drifts (auditor)',
    description:
      "Every difference reconciliation flagged between Portico's records and the provider's, newest first, with both sides' values; each once, however many runs find it again.",
  })
  @ApiOkResponse({ type: ReconciliationDriftPage })
  listReconciliationDrifts(
    @Query() query: ReconciliationDriftsQuery,
  ): Promise<ReconciliationDriftPage> {
    return this.runs.listDrifts(query);
  }
}
