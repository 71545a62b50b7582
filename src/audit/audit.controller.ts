import { Controller, Get, Param, Query, StreamableFile } from '@nestjs/common';
import { Readable } from 'node:stream';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Auth } from '../access/auth/auth.decorator.js';
import { ApiProblems, ApiStandardProblems } from '../platform/errors/api-problem-responses.js';
import { ConsentParams } from '../open-banking/consents/dto/params.dto.js';
import {
  AuditAccessesQuery,
  AuditAccessPage,
  AuditCardResourceDetail,
  AuditCardResourcePage,
  AuditCardResourcesQuery,
  CardResourceParams,
  AuditConsentDetail,
  AuditConsentPage,
  AuditConsentsQuery,
  AuditPaymentDetail,
  AuditPaymentPage,
  AuditPaymentsQuery,
  AuditTenantPage,
  AuditTenantsQuery,
} from './audit.dto.js';
import { PaymentParams } from '../open-banking/payments/dto/payment.dto.js';
import { AuditService } from './audit.service.js';
import { AuditExportService } from './audit-export.service.js';
import { AuditExportDocument, AuditExportQuery } from './audit-export.dto.js';
import { CheckpointList, VerificationQuery, VerificationReportView } from './audit-chain.dto.js';
import { AuditVerifierService } from './trail/audit-verifier.service.js';
import { AuditChainService } from './trail/audit-chain.service.js';

@ApiTags('Audit')
@ApiExtraModels(AuditExportDocument)
@ApiStandardProblems()
@Auth('auditor')
@Controller('v1/audit')
export class AuditController {
  constructor(
    private readonly audit: AuditService,
    private readonly verifier: AuditVerifierService,
    private readonly chain: AuditChainService,
    private readonly exporter: AuditExportService,
  ) {}

  @Get('export')
  @ApiOperation({
    summary: 'Export the trail as JSON or CSV (auditor)',
    description:
      'Every status change and every call under a consent or payment, in time order, each with the chain link (`chainSeq`, `chainHash`) that seals it, preceded by the verification the export was checked with and the checkpoint it was verified against. Streamed: a year of data never sits in memory.',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    description:
      'JSON: `{ verification, records: [...] }`; CSV: `# verification` and `# checkpoint` lines, a header row, a row per record',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(AuditExportDocument) } },
      'text/csv': {
        schema: { type: 'string', maxLength: 10_000_000_000, pattern: '^[^\\u0000]*$' },
      },
    },
  })
  exportAuditTrail(@Query() query: AuditExportQuery): StreamableFile {
    const format = query.format ?? 'json';
    return new StreamableFile(Readable.from(this.exporter.export(query)), {
      type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      disposition: `attachment; filename="portico-audit-trail.${format}"`,
    });
  }

  @Get('payments')
  @ApiOperation({
    summary: 'List payments (auditor)',
    description: "Every tenant's payment initiations, newest first, filtered and paged.",
  })
  @ApiOkResponse({ type: AuditPaymentPage })
  listAuditPayments(@Query() query: AuditPaymentsQuery): Promise<AuditPaymentPage> {
    return this.audit.listPayments(query);
  }

  @Get('payments/:paymentId')
  @ApiOperation({
    summary: 'Show a payment with its history and accesses (auditor)',
    description: 'Its status history (append-only) and every call made under it.',
  })
  @ApiOkResponse({ type: AuditPaymentDetail })
  @ApiProblems({ 404: 'No such payment' })
  getAuditPayment(@Param() params: PaymentParams): Promise<AuditPaymentDetail> {
    return this.audit.paymentDetail(params.paymentId);
  }

  @Get('card-resources')
  @ApiOperation({
    summary: 'List card payments, refunds and customers (auditor)',
    description: "Every tenant's card resources, newest first, filtered and paged.",
  })
  @ApiOkResponse({ type: AuditCardResourcePage })
  listAuditCardResources(@Query() query: AuditCardResourcesQuery): Promise<AuditCardResourcePage> {
    return this.audit.listCardResources(query);
  }

  @Get('card-resources/:cardResourceId')
  @ApiOperation({
    summary: 'Show a card payment, refund or customer with its history and calls (auditor)',
    description: 'Its status history (append-only) and every call to the card API about it.',
  })
  @ApiOkResponse({ type: AuditCardResourceDetail })
  @ApiProblems({ 404: 'No such card resource' })
  getAuditCardResource(@Param() params: CardResourceParams): Promise<AuditCardResourceDetail> {
    return this.audit.cardResourceDetail(params.cardResourceId);
  }

  @Get('accesses')
  @ApiOperation({
    summary: 'List calls made under consents and payments (auditor)',
    description:
      'The access log across resources, newest first: operation, request id, tenant, user present or not, upstream status, latency, outcome.',
  })
  @ApiOkResponse({ type: AuditAccessPage })
  listAuditAccesses(@Query() query: AuditAccessesQuery): Promise<AuditAccessPage> {
    return this.audit.listAccesses(query);
  }

  @Get('tenants')
  @ApiOperation({
    summary: 'List tenants by name (auditor)',
    description:
      "Each tenant's id and display name, nothing else, by name and paged: to find a tenant's resources (the lists take `tenantId` or `tenantName`).",
  })
  @ApiOkResponse({ type: AuditTenantPage })
  listAuditTenants(@Query() query: AuditTenantsQuery): Promise<AuditTenantPage> {
    return this.audit.listTenants(query);
  }

  @Get('verification')
  @ApiOperation({
    summary: 'Verify the tamper-evident chain (auditor)',
    description:
      'Walks the chain over the status changes and access-log rows from the newest signed checkpoint a verification passed (from its first link with `full=true`, or when none passed): numbering, each row against the hash it was sealed with, each link hash, each signed checkpoint; then rows outside the chain. Reports the first break precisely, and records the verification.',
  })
  @ApiOkResponse({ type: VerificationReportView })
  verifyAuditChain(@Query() query: VerificationQuery): Promise<VerificationReportView> {
    return this.verifier.verify({ from: query.full ? 'start' : 'last-verified', trigger: 'api' });
  }

  @Get('checkpoints')
  @ApiOperation({
    summary: 'List signed checkpoints of the chain (auditor)',
    description:
      'The signed heads of the chain, newest first, with the public keys that verify them (the signing key and the retired ones): keep them outside Portico to prove later that the trail was not rewritten.',
  })
  @ApiOkResponse({ type: CheckpointList })
  listAuditCheckpoints(): Promise<CheckpointList> {
    return this.audit.checkpoints(this.chain.signingKey()?.publicKeyPem ?? null, [
      ...this.chain.trustedKeys().values(),
    ]);
  }

  @Get('consents')
  @ApiOperation({
    summary: 'List consents (auditor)',
    description:
      "Every tenant's consents, newest first, filtered and paged. Role auditor: the installation's compliance role, issued by an operator.",
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
