import type { SealedTable } from '../platform/secrets/secrets-reseal.service.js';
import type { SecretsService } from '../platform/secrets/secrets.service.js';
import { SECRET_PREFIX } from './webhook-signature.js';

/** What a sealed secret is bound to: its endpoint (both the current and the previous secret). */
const contextOf = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export const sealWebhookSecret = (secrets: SecretsService, endpointId: string, secret: string) =>
  secrets.seal(secret, contextOf(endpointId));

/** The secret itself; a value stored before secrets were sealed (`whsec_…`) is taken as it is. */
export const openWebhookSecret = (secrets: SecretsService, endpointId: string, stored: string) =>
  stored.startsWith(SECRET_PREFIX) ? stored : secrets.open(stored, contextOf(endpointId));

/** The endpoints' sealed secrets, for the re-seal after a SECRETS_KEY rotation (a plain one is sealed too). */
export const WEBHOOK_SEALED_SECRETS: SealedTable = {
  table: 'webhook_endpoints',
  idColumn: 'id',
  columns: ['secret_sealed', 'previous_secret_sealed'],
  context: (endpointId) => contextOf(endpointId),
  plain: (stored) => stored.startsWith(SECRET_PREFIX),
};
