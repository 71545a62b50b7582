import { type Authorisation, type ScaSession } from './authorisation-model.js';
import { type Consent } from './consent-model.js';
import { Ledger } from './ledger.js';
import { type Payment } from './payment-model.js';
import { TrackedMap } from './tracked-map.js';
import { type ProductRules } from './types.js';

/**
 * Everything the sandbox bank remembers; replaced wholesale by control.reset(). The maps note the
 * keys each operation touched, so that only those records are written to the state store.
 */
export class BankState {
  readonly ledger: Ledger;
  readonly consents = new TrackedMap<string, Consent>();
  readonly payments = new TrackedMap<string, Payment>();
  readonly authorisations = new TrackedMap<string, Authorisation>();
  readonly sessions = new TrackedMap<string, ScaSession>();
  /** Successful unattended account reads, keyed `${consentId}|${utcDay}`. */
  readonly unattendedReads = new TrackedMap<string, number>();
  /** Operations answered since the process started (a diagnostic for tests; not stored). */
  readonly calls = new Map<string, number>();

  /** `anchor`: the day the account history was generated up to; kept across restarts. */
  constructor(readonly anchor: Date) {
    this.ledger = new Ledger(anchor);
  }
}

/** What every operation handler needs. */
export interface BankContext {
  readonly state: BankState;
  readonly now: () => Date;
  readonly scaBaseUrl: string;
  readonly productRules: ProductRules;
}
