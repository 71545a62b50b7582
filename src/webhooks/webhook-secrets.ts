import type { SecretsService } from '../platform/secrets/secrets.service.js';
import { SECRET_PREFIX } from './webhook-signature.js';

/** What a sealed secret is bound to: its endpoint (both the current and the previous secret). */
const contextOf = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export const sealWebhookSecret = (secrets: SecretsService, endpointId: string, secret: string) =>
  secrets.seal(secret, contextOf(endpointId));

/** The secret itself; a value stored before secrets were sealed (`whsec_…`) is taken as it is. */
export const openWebhookSecret = (secrets: SecretsService, endpointId: string, stored: string) =>
  stored.startsWith(SECRET_PREFIX) ? stored : secrets.open(stored, contextOf(endpointId));
