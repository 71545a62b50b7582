import { AccessLogEntry } from '../audit/trail/access-log-entry.entity.js';
import { ConsentUsage } from './consent-access/consent-usage.entity.js';
import { Consent } from './consents/consent.entity.js';
import { StatusChange } from '../audit/trail/status-change.entity.js';
import { Payment } from './payments/payment.entity.js';
import { ScaSession } from './sca-sessions/sca-session.entity.js';

export const OPEN_BANKING_ENTITIES = [
  Consent,
  StatusChange,
  AccessLogEntry,
  ConsentUsage,
  ScaSession,
  Payment,
];
