import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '../platform/errors/api-problem-responses.js';
import { ConsentParams } from '../open-banking/consents/dto/params.dto.js';
import { AuditConsentDetail, AuditConsentPage, AuditConsentsQuery } from './audit.dto.js';
import { AuditService } from './audit.service.js';

@ApiTags('Audit')
@ApiStandardProblems()
@Auth('auditor')
@Controller('v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get('consents')
  @ApiOperation({
    summary: 'List consents (auditor)',
    description:
      "Every tenant's consents, newest first, filtered and paged. Role auditor: the operator's compliance role, issued by an admin.",
  })
  @ApiOkResponse({ type: AuditConsentPage })
  listAuditConsents(@Query() query: AuditConsentsQuery): Promise<AuditConsentPage> {
    return this.audit.listConsents(query);
  }

  @Get('consents/:consentId')
  @ApiOperation({
    summary: 'Show a consent with its history and accesses (auditor)',
    description: 'Its status history (append-only) and every call made under it, refused or not.',
  })
  @ApiOkResponse({ type: AuditConsentDetail })
  @ApiProblems({ 404: 'No such consent' })
  getAuditConsent(@Param() params: ConsentParams): Promise<AuditConsentDetail> {
    return this.audit.consentDetail(params.consentId);
  }
}
