import { type Authorisation, type ScaSession } from './authorisation-model.js';
import { type Consent } from './consent-model.js';
import { Ledger } from './ledger.js';
import { type Payment } from './payment-model.js';
import { type ProductRules } from './types.js';

/** Everything the sandbox bank remembers; replaced wholesale by control.reset(). */
export class BankState {
  readonly ledger: Ledger;
  readonly consents = new Map<string, Consent>();
  readonly payments = new Map<string, Payment>();
  readonly authorisations = new Map<string, Authorisation>();
  readonly sessions = new Map<string, ScaSession>();
  /** Successful unattended account reads, keyed `${consentId}|${utcDay}`. */
  readonly unattendedReads = new Map<string, number>();
  readonly calls = new Map<string, number>();

  constructor(anchor: Date) {
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
