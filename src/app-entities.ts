import { CardCredentials } from './access/merchant-credentials/card-credentials.entity.js';
import { ApiKeyUsage } from './access/tenants/api-key-usage.entity.js';
import { ApiKey } from './access/tenants/api-key.entity.js';
import { Tenant } from './access/tenants/tenant.entity.js';
import { AccessLogEntry } from './audit/trail/access-log-entry.entity.js';
import {
  AuditChainLink,
  AuditCheckpoint,
  AuditRetentionCut,
  AuditVerification,
  AuditArchive,
  AuditSealFloor,
  WriterLease,
} from './audit/trail/audit-chain.entity.js';
import { StatusChange } from './audit/trail/status-change.entity.js';
import { ProviderResource } from './provider-ledger/provider-resource.entity.js';
import { ConsentUsage } from './open-banking/consent-access/consent-usage.entity.js';
import { Consent } from './open-banking/consents/consent.entity.js';
import { Payment } from './open-banking/payments/payment.entity.js';
import { ScaSession } from './open-banking/sca-sessions/sca-session.entity.js';
import { IdempotencyRecord } from './platform/idempotency/idempotency-record.entity.js';
import { WEBHOOK_ENTITIES } from './webhooks/webhook.entities.js';
import { RECONCILIATION_ENTITIES } from './reconciliation/reconciliation.entities.js';

/**
 * Every entity of the gateway, for what sees the whole schema at once: the migration scripts and the
 * CLI. The app itself does not use this list: each module registers its own entities
 * (`TypeOrmModule.forFeature`) and the database module collects them (`autoLoadEntities`); a test
 * holds the two to the same set.
 */
export const APP_ENTITIES = [
  Tenant,
  ApiKey,
  ApiKeyUsage,
  CardCredentials,
  IdempotencyRecord,
  Consent,
  ConsentUsage,
  ScaSession,
  Payment,
  StatusChange,
  AccessLogEntry,
  AuditChainLink,
  AuditCheckpoint,
  AuditSealFloor,
  WriterLease,
  AuditRetentionCut,
  AuditVerification,
  AuditArchive,
  ...WEBHOOK_ENTITIES,
  ProviderResource,
  ...RECONCILIATION_ENTITIES,
];
