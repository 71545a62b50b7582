import { CardCredentials } from '../../card/credentials/card-credentials.entity.js';
import { ProviderResource } from '../../provider-ledger/provider-resource.entity.js';
import { IdempotencyRecord } from '../idempotency/idempotency-record.entity.js';
import { OPEN_BANKING_ENTITIES } from '../../open-banking/entities.js';
import { ApiKeyUsage } from '../../access/tenants/api-key-usage.entity.js';
import { ApiKey } from '../../access/tenants/api-key.entity.js';
import { Tenant } from '../../access/tenants/tenant.entity.js';
import {
  AuditChainLink,
  AuditCheckpoint,
  AuditRetentionCut,
  AuditSealFloor,
} from '../../audit/trail/audit-chain.entity.js';
import { WEBHOOK_ENTITIES } from '../../webhooks/webhook.entities.js';

/** Every entity, listed explicitly (ESM has no reliable glob loading). */
export const ENTITIES = [
  Tenant,
  ApiKey,
  ApiKeyUsage,
  IdempotencyRecord,
  ...OPEN_BANKING_ENTITIES,
  AuditChainLink,
  AuditCheckpoint,
  AuditSealFloor,
  AuditRetentionCut,
  ...WEBHOOK_ENTITIES,
  CardCredentials,
  ProviderResource,
];
