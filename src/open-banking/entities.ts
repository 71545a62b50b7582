import { AccessLogEntry } from './access-log/access-log-entry.entity.js';
import { ConsentUsage } from './accounts/consent-usage.entity.js';
import { Consent } from './consents/consent.entity.js';
import { StatusChange } from './consents/status-change.entity.js';
import { Payment } from './payments/payment.entity.js';
import { ScaSession } from './sca/sca-session.entity.js';

export const OPEN_BANKING_ENTITIES = [Consent, StatusChange, AccessLogEntry, ConsentUsage, ScaSession, Payment];
